import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A folder outside a store that hostile links point to; its files must never change
/// (Docs/Security.md, "A hostile store folder").
///
/// It holds what a careless sweep would take: files named like Strata's temporary files, entries and
/// statistics (an hour old), a fan-out-like sub-folder, and a plain file.
public struct Canary: Sendable {
    /// The canary folder, `canary` inside the parent given to ``init(in:)``.
    public let url: URL

    /// Makes the canary folder and its files inside `parent` (created if needed).
    ///
    /// - Throws: The file system's error.
    public init(in parent: URL) throws {
        url = parent.appendingPathComponent("canary", isDirectory: true)
        let fanOut = url.appendingPathComponent("ab", isDirectory: true)
        try FileManager.default.createDirectory(at: fanOut, withIntermediateDirectories: true)
        let old = Date().addingTimeInterval(-3600)
        for (name, text) in [
            ("1-dead-1.tmp", "looks like a crashed writer's temporary file"),
            ("notes.txt", "someone's notes"),
            ("ab/" + String(repeating: "ab", count: 32), "looks like an entry"),
            ("store.stats", "{\"format\":1}"),
        ] {
            let file = url.appendingPathComponent(name)
            try Data(text.utf8).write(to: file)
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: file.path)
        }
    }

    /// Every file below the canary with its contents, and every folder (with an empty value): equal before
    /// and after only if nothing below it changed.
    public func snapshot() -> [String: Data] {
        var result: [String: Data] = [:]
        guard let walker = FileManager.default.enumerator(atPath: url.path) else { return result }
        while let relative = walker.nextObject() as? String {
            let path = url.appendingPathComponent(relative).path
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            result[relative] = (info.st_mode & S_IFMT) == S_IFREG ? FileManager.default.contents(atPath: path) : Data()
        }
        return result
    }
}

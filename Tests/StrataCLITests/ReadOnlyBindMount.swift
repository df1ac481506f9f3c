import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A folder shown read-only over itself through a bind mount, so that even root cannot change what is
/// below it (EROFS): the way these tests make a store, or one folder of it, read-only while running as
/// root. Unmounted lazily by ``unmount()``.
struct ReadOnlyBindMount {
    let path: String

    /// Why tests that need it are skipped where they are.
    static let requirement: Comment = "needs root on Linux with mount(8) allowed (a read-only bind mount)"

    /// Whether this process can make one (probed once, by making one).
    static let available: Bool = {
        #if os(Linux)
        guard geteuid() == 0, FileManager.default.isExecutableFile(atPath: "/bin/mount") else { return false }
        let probe = FileManager.default.temporaryDirectory.appendingPathComponent("strata-cli-mount-\(UUID())")
        defer { try? FileManager.default.removeItem(at: probe) }
        guard (try? FileManager.default.createDirectory(at: probe, withIntermediateDirectories: true)) != nil,
            let mount = try? ReadOnlyBindMount(probe.path)
        else { return false }
        mount.unmount()
        return true
        #else
        return false
        #endif
    }()

    /// Makes `path` (an existing folder) read-only.
    init(_ path: String) throws {
        try Self.run("/bin/mount", ["--bind", path, path])
        self.path = path
        do {
            try Self.run("/bin/mount", ["-o", "remount,bind,ro", path])
        } catch {
            unmount()
            throw error
        }
    }

    func unmount() {
        try? Self.run("/bin/umount", ["-l", path])
    }

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: "\(tool) \(arguments)"])
        }
    }
}

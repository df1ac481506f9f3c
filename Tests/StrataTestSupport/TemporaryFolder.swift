import Foundation

/// A fresh, empty folder under the system temporary directory, removed when the last reference goes away,
/// so each test cleans up after itself without teardown code.
///
/// Keep the value alive for as long as anything uses the folder (a suite's stored property, or a local
/// that the test still reads at its end): Swift may release a local after its last use.
public final class TemporaryFolder: Sendable {
    /// The folder.
    public let url: URL

    /// Makes `strata-<label>-<UUID>` under the temporary directory. A folder that cannot be made shows up as
    /// a failure of the first test step that writes in it.
    public init(label: String = "tests") {
        url = Self.uniqueURL(label: label)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    deinit {
        // A cache kept alive by a completion-handler task may flush its counters while the folder is being
        // removed; retry so no test leaves files behind.
        for _ in 0..<3 where FileManager.default.fileExists(atPath: url.path) {
            try? FileManager.default.removeItem(at: url)
        }
    }

    /// A path inside the folder.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Makes a fresh folder that nobody removes automatically, for a process that hands its path to child
    /// processes and removes it itself.
    ///
    /// - Throws: The file system's error when the folder cannot be made.
    public static func make(label: String) throws -> URL {
        let url = uniqueURL(label: label)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    private static func uniqueURL(label: String) -> URL {
        FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-\(label)-\(UUID().uuidString)", isDirectory: true)
    }
}

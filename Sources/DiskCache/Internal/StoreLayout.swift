import Foundation

/// The paths inside a store folder (see Docs/DiskFormat.md, "Folder layout").
///
/// ```
/// <store>/store.check        key-check record (epoch salt, sealed known plaintext)
/// <store>/store.lock         advisory flock for trim, wipe, statistics and check-record creation
/// <store>/store.stats        persisted counters (JSON)
/// <store>/tmp/               temporary files, renamed into place
/// <store>/locks/<hex>.lock   per-key locks for withLock(forKey:)
/// <store>/entries/<xx>/<hex> one entry per file, fanned out by the first two hex digits
/// ```
struct StoreLayout: Sendable {
    let root: String

    init(root: URL) {
        var path = root.path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        self.root = path
    }

    var checkRecord: String { root + "/store.check" }
    var storeLock: String { root + "/store.lock" }
    var statisticsFile: String { root + "/store.stats" }
    var temporaryFolder: String { root + "/tmp" }
    var locksFolder: String { root + "/locks" }
    var entriesFolder: String { root + "/entries" }

    func fanOutFolder(for name: String) -> String { entriesFolder + "/" + name.prefix(2) }
    func entry(_ name: String) -> String { fanOutFolder(for: name) + "/" + name }
    func keyLock(_ name: String) -> String { locksFolder + "/" + name + ".lock" }

    /// A fresh temporary file name: process id plus 64 random bits, so concurrent writers never clash.
    func temporaryFile() -> String {
        temporaryFolder + "/" + String(getpid()) + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 16) + ".tmp"
    }

    /// Whether `name` looks like an entry file name (64 lower-case hex digits).
    static func isEntryName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}

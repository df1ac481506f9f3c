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
    // Built once: every operation needs one of these, and building a path costs an allocation per piece.
    let checkRecord: String
    let storeLock: String
    let statisticsFile: String
    let temporaryFolder: String
    let locksFolder: String
    let entriesFolder: String
    /// `tmp/<pid>-<64 random bits>-`: with a per-store sequence number, a temporary file name no other
    /// writer uses (another process has another pid or other random bits; `O_EXCL` catches the rest).
    let temporaryPrefix: String

    init(root: URL) {
        var path = root.path
        while path.count > 1 && path.hasSuffix("/") { path.removeLast() }
        self.root = path
        checkRecord = path + "/store.check"
        storeLock = path + "/store.lock"
        statisticsFile = path + "/store.stats"
        temporaryFolder = path + "/tmp"
        locksFolder = path + "/locks"
        entriesFolder = path + "/entries"
        temporaryPrefix =
            temporaryFolder + "/" + String(getpid()) + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 16) + "-"
    }

    func fanOutFolder(for name: String) -> String { entriesFolder + "/" + name.prefix(2) }
    func entry(_ name: String) -> String {
        var path = entriesFolder
        path.reserveCapacity(entriesFolder.utf8.count + 4 + name.utf8.count)
        path += "/"
        path += name.prefix(2)
        path += "/"
        path += name
        return path
    }
    func keyLock(_ name: String) -> String { locksFolder + "/" + name + ".lock" }

    /// The temporary file name for this store's `sequence`-th write.
    func temporaryFile(sequence: UInt64) -> String {
        temporaryPrefix + String(sequence, radix: 16) + ".tmp"
    }

    /// Whether `name` looks like an entry file name (64 lower-case hex digits).
    static func isEntryName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}

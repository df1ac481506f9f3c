import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

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
    /// `<pid>-<64 random bits>-` in `tmp/`: with a per-store sequence number, a temporary file name no
    /// other writer uses (another process has another pid or other random bits; `O_EXCL` catches the rest).
    let temporaryPrefix: String

    static let checkRecordName = "store.check"
    static let storeLockName = "store.lock"
    static let statisticsName = "store.stats"
    static let temporaryName = "tmp"
    static let locksName = "locks"
    static let entriesName = "entries"
    static let quarantineName = "quarantine"

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
        temporaryPrefix = String(getpid()) + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 16) + "-"
    }

    /// Whether the folder already holds a store: anything at `store.check` (not followed if a link) means
    /// a master key was used here, so a fresh key must not be created for it. Does one `lstat(2)`.
    var holdsStore: Bool {
        var status = stat()
        return lstat(checkRecord, &status) == 0
    }

    /// The error for a store that exists (``holdsStore``) while its key file at `keyFilePath` does not:
    /// a new master key would make every entry unreadable, so none is created; `nil` when there is no store.
    func missingKeyFileError(keyFilePath: String) -> CacheError? {
        guard holdsStore else { return nil }
        return CacheError(
            .masterKeyNotFound,
            "the store at \(root) was created with a master key, but there is no key file at "
                + "\(keyFilePath); restore that file, pass the key it held (MasterKeySource.key), or discard the "
                + "store with DiskCacheConfiguration.removeStore() (its entries cannot be read without the key)",
            path: keyFilePath)
    }

    func fanOutFolder(for name: String) -> String { entriesFolder + "/" + name.prefix(2) }
    func entry(_ name: String) -> String {
        // `<entries>/<first two of name>/<name>`, copied in one pass: a chain of appends cost ~2.4k instr.
        var folder = entriesFolder
        var file = name
        return folder.withUTF8 { folderBytes in
            file.withUTF8 { nameBytes in
                let prefixCount = min(2, nameBytes.count)
                let total = folderBytes.count + prefixCount + nameBytes.count + 2
                return String(unsafeUninitializedCapacity: total) { path in
                    var position = path.initialize(fromContentsOf: folderBytes)
                    path[position] = UInt8(ascii: "/")
                    position += 1
                    for index in 0..<prefixCount { path[position + index] = nameBytes[index] }
                    position += prefixCount
                    path[position] = UInt8(ascii: "/")
                    position += 1
                    position += UnsafeMutableBufferPointer(rebasing: path[position...]).initialize(
                        fromContentsOf: nameBytes)
                    return position
                }
            }
        }
    }
    func keyLock(_ name: String) -> String { locksFolder + "/" + name + ".lock" }

    /// The temporary file name (in `tmp/`) for this store's `sequence`-th write.
    func temporaryFile(sequence: UInt64) -> String {
        temporaryPrefix + String(sequence, radix: 16) + ".tmp"
    }

    /// Whether `name` has the form of Strata's temporary files, `<pid>-<hex>-<hex>.tmp`: the only names
    /// the stale-file sweep of `tmp/` may delete.
    static func isTemporaryName(_ name: String) -> Bool {
        let parts = name.utf8.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard parts.count == 3, name.hasSuffix(".tmp"), let pid = parts.first, !pid.isEmpty, pid.count <= 10,
            pid.allSatisfy({ (48...57).contains($0) })
        else { return false }
        let isHex: (UInt8) -> Bool = { (48...57).contains($0) || (97...102).contains($0) }
        let random = parts[1]
        let sequence = parts[2].dropLast(4)
        return !random.isEmpty && random.count <= 16 && random.allSatisfy(isHex)
            && !sequence.isEmpty && sequence.count <= 16 && sequence.allSatisfy(isHex)
    }

    /// Whether `name` looks like an entry file name (64 lower-case hex digits).
    static func isEntryName(_ name: String) -> Bool {
        name.utf8.count == 64 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }
}

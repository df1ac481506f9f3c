import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Why: an entry's file and its line in the in-memory index change in two steps (a rename or an unlink,
// then the index update). Two threads changing one name — a write and a removal, two writes, a hit that
// records recency and a removal — could finish those steps in opposite orders and leave the index
// counting a file that is gone, or missing one that is there. Each such pair of steps runs under the
// name's stripe, so per name the index ends as the last file change left the folder. Lock order: the
// store lock (a file lock) before stripes, stripes before the in-memory locks; nothing is waited for under a stripe
// but those.

/// The number of stripes: enough that two busy names rarely share one on two cores.
let nameLockStripeCount = 64

extension DiskStore {
    /// Runs `body` under the stripe of entry name `name` (its file change and its index update together).
    func withNameLock<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
        try nameLocks[Self.stripe(of: name)].withLock { _ in try body() }
    }

    /// Runs `body` under every stripe (a wipe, which changes every name at once).
    func withAllNameLocks<T>(_ body: () throws -> T) rethrows -> T {
        try withNameLocks(from: 0, body)
    }

    private func withNameLocks<T>(from index: Int, _ body: () throws -> T) rethrows -> T {
        guard index < nameLocks.count else { return try body() }
        return try nameLocks[index].withLock { _ in try withNameLocks(from: index + 1, body) }
    }

    /// Removes entry file `name` if it is still the file `status` describes, and forgets it in the index
    /// when it is gone (removed now, or already by someone else); a newer file in its place stays counted.
    ///
    /// - Returns: Whether this call removed the file.
    func removeIfUnchangedAndForget(_ name: String, in folder: Directory, status: FileStatus) -> Bool {
        withNameLock(name) {
            let removed = removeIfUnchanged(name, in: folder, status: status)
            let gone = removed || ((try? folder.status(name)) ?? nil) == nil
            if gone { accounting.recordRemoval(name) }
            return removed
        }
    }

    /// Entry names are hex digests: two of their digits pick the stripe.
    static func stripe(of name: String) -> Int {
        var hash = 0
        for byte in name.utf8.prefix(4) { hash = hash &* 31 &+ Int(byte) }
        return hash & (nameLockStripeCount - 1)
    }
}

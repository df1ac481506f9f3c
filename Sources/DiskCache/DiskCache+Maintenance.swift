import CacheCore
import Foundation

extension DiskCache {
    /// Removes expired entries, and entries left from an earlier key epoch; reads only each file's
    /// header (no decryption).
    ///
    /// - Returns: The number of expired entries removed (old-epoch files are counted as corrupt).
    /// - Throws: `CacheError` when the store folder cannot be listed.
    /// - Complexity: O(n) file reads of 52 bytes.
    @discardableResult
    public func removeExpired() throws -> Int {
        try store.removeExpired()
    }

    /// Trims least-recently-used entries until the store is within the low-water marks of its limits
    /// (``DiskCacheConfiguration/lowWaterFraction`` of `maxBytes` and `maxEntries`).
    ///
    /// Takes the store's `flock` and rescans the folder, so entries written by other processes count.
    ///
    /// - Returns: The number of entries removed; 0 when the store has no limits.
    /// - Throws: `CacheError` when the folder cannot be listed or locked.
    /// - Complexity: O(n log n) in the number of entries, plus one `lstat` per file.
    @discardableResult
    public func trim() throws -> Int {
        let maxBytes = configuration.maxBytes
        let maxEntries = configuration.maxEntries
        guard maxBytes != nil || maxEntries != nil else { return 0 }
        return try store.trim(toBytes: maxBytes.map(store.lowWater), toCount: maxEntries.map(store.lowWater))
    }

    /// Trims least-recently-used entries until the entry files take at most `bytes` bytes.
    ///
    /// - Parameter bytes: The target size in bytes, at least 0.
    /// - Returns: The number of entries removed.
    /// - Throws: `CacheError` `.invalidArgument` for a negative target, or a file-system error.
    /// - Complexity: O(n log n) in the number of entries, plus one `lstat` per file.
    @discardableResult
    public func trim(toBytes bytes: Int) throws -> Int {
        guard bytes >= 0 else {
            throw CacheError(.invalidArgument, "trim target must be at least 0 bytes, not \(bytes)")
        }
        return try store.trim(toBytes: bytes, toCount: nil)
    }

    /// Authenticates every entry, removes the ones that fail (and expired ones), and reports them.
    ///
    /// - Parameter progress: Called on the caller's thread with (files done, files total) before each
    ///   file and once at the end.
    /// - Returns: How many files were checked and which were removed, with reasons.
    /// - Throws: `CacheError` when the store folder cannot be listed. Files that cannot be read are
    ///   reported as `readFailed` and skipped.
    /// - Complexity: O(n) full reads and decryptions.
    public func verify(progress: ((Int, Int) -> Void)? = nil) throws -> DiskCacheVerifyReport {
        try store.sweep(progress: progress) { _, _ in }
    }

    /// Lists the live entries with their decrypted keys, sizes on disk, expiry and last access.
    ///
    /// Corrupt and expired entries met on the way are removed, as a read would. Entries whose key
    /// bytes are not a `Key` (written by a cache with another key type) are skipped.
    ///
    /// - Returns: The entries, least recently used first.
    /// - Throws: `CacheError` when the store folder cannot be listed.
    /// - Complexity: O(n) full reads and decryptions.
    public func listEntries() throws -> [DiskCacheEntryInfo<Key>] {
        var entries: [DiskCacheEntryInfo<Key>] = []
        _ = try store.sweep(progress: nil) { record, status in
            guard let key = Key(canonicalBytes: record.keyBytes) else { return }
            entries.append(
                DiskCacheEntryInfo(
                    key: key, size: status.size, expiresAt: record.header.expiresAt,
                    lastAccess: status.modificationDate))
        }
        return entries.sorted { $0.lastAccess < $1.lastAccess }
    }

    /// A snapshot of the counters (since the store was created, across processes) and totals.
    ///
    /// The first call in a process scans the folder (one `lstat` per file) to learn the entries'
    /// sizes; later calls are O(1) plus one small file read. Totals reflect other processes' writes
    /// as of this process's last scan (every trim rescans).
    public var statistics: DiskCacheStatistics { store.statistics() }

    /// Merges this instance's counters into the store's statistics file, under the store's `flock`.
    /// Also done when the instance is deinitialized.
    ///
    /// - Throws: `CacheError` when the statistics file cannot be written; the counts are kept for the
    ///   next attempt.
    public func flushStatistics() throws {
        try store.flushStatistics()
    }
}

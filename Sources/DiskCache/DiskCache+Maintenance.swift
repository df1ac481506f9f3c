import CacheCore
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DiskCache {
    /// Removes expired entries, entries left from an earlier key epoch, and tagged entries whose tag was
    /// removed (`removeAll(taggedWith:)`, here or in another process) since they were stored.
    ///
    /// Reads only each file's header (no decryption), except for tagged entries once some tag was ever
    /// removed in this store: their stamped tag versions are inside the ciphertext, so those are opened
    /// in full. Files whose header does not parse, or that belong to an earlier key epoch, are removed as
    /// corrupt and reported to the observer. A file that cannot be opened or read is skipped, and so is a
    /// tagged entry whose tag counter cannot be read (reads report it and never serve it).
    ///
    /// - Returns: The number of expired and tag-stale entries removed (old-epoch files are counted as
    ///   corrupt). Only the expired ones count in `statistics.expirations`.
    /// - Throws: `CacheError` when the store folder cannot be listed, or the key-check record changed by
    ///   another process cannot be read or opened with this key.
    /// - Complexity: O(*n*) file operations on the caller's thread for *n* entry files: one `lstat`, one
    ///   open and one 52-byte read each; plus, for each tagged entry once a tag was ever removed, a full
    ///   read and AES-GCM decryption (O(its size)) and a read of each of its tags' counters not read yet
    ///   during this call.
    ///
    /// Thread-safe.
    @discardableResult
    public func removeExpired() throws -> Int {
        try engine.removeExpired()
    }

    /// Trims least-recently-used entries until the store is within the low-water marks of its limits
    /// (``DiskCacheConfiguration/lowWaterFraction`` of `byteLimit` and `countLimit`).
    ///
    /// Takes the store's `flock` (waiting for it) and rescans the folder, so entries written by other
    /// processes count. Recency is each file's modification time.
    ///
    /// - Returns: The number of entries removed; 0 when the store has no limits.
    /// - Throws: `CacheError` `.readOnly` when the store was opened read-only, or when the folder cannot
    ///   be listed or locked. A file that cannot be removed is skipped.
    /// - Complexity: O(*n* log *n*) for *n* entries, plus one `lstat` per file and one `unlink` per entry
    ///   removed, on the caller's thread.
    ///
    /// Thread-safe.
    @discardableResult
    public func trim() throws -> Int {
        let byteLimit = configuration.byteLimit
        let countLimit = configuration.countLimit
        guard byteLimit != nil || countLimit != nil else { return 0 }
        return try engine.trim(toBytes: byteLimit.map(engine.lowWater), toCount: countLimit.map(engine.lowWater))
    }

    /// Trims least-recently-used entries until the entry files take at most `bytes` bytes.
    ///
    /// Like `trim()`, it takes the store's `flock` and rescans the folder first; the entry count is not
    /// limited by this call.
    ///
    /// - Parameter bytes: The target size in bytes (the entry files' real sizes), at least 0.
    /// - Returns: The number of entries removed.
    /// - Throws: `CacheError` `.invalidArgument` for a negative target, or the error of `trim()` when
    ///   the folder cannot be listed or locked.
    /// - Complexity: O(*n* log *n*) for *n* entries, plus one `lstat` per file and one `unlink` per entry
    ///   removed, on the caller's thread.
    ///
    /// Thread-safe.
    @discardableResult
    public func trim(toBytes bytes: Int) throws -> Int {
        guard bytes >= 0 else {
            throw CacheError(.invalidArgument, "trim target must be at least 0 bytes, not \(bytes)")
        }
        return try engine.trim(toBytes: bytes, toCount: nil)
    }

    /// Trims least-recently-used entries until the store holds at most `count` entries.
    ///
    /// Like `trim()`, it takes the store's `flock` and rescans the folder first; the bytes are not
    /// limited by this call.
    ///
    /// - Parameter count: The most entries to keep (a count of entries), at least 0.
    /// - Returns: The number of entries removed.
    /// - Throws: `CacheError` `.invalidArgument` for a negative target, or the error of `trim()` when
    ///   the folder cannot be listed or locked.
    /// - Complexity: O(*n* log *n*) for *n* entries, plus one `lstat` per file and one `unlink` per entry
    ///   removed, on the caller's thread.
    ///
    /// Thread-safe.
    @discardableResult
    public func trim(toCount count: Int) throws -> Int {
        guard count >= 0 else {
            throw CacheError(.invalidArgument, "trim target must be at least 0 entries, not \(count)")
        }
        return try engine.trim(toBytes: nil, toCount: count)
    }

    /// Authenticates every entry, removes the ones that fail (and expired ones, and tagged ones whose tag
    /// was removed since they were stored: reason `a tag was removed`), and reports them.
    ///
    /// Failures are: a damaged or truncated file, an unknown format version, an earlier key epoch, a
    /// failed AES-GCM authentication, or a key inside that does not hash to the file name. Each corrupt
    /// file is also reported to the observer.
    ///
    /// - Parameter progress: Called on the caller's thread with (files done, files total), both counts of
    ///   files, before each file and once at the end.
    /// - Returns: How many files were checked and which were removed, with reasons.
    /// - Throws: `CacheError` when the store folder cannot be listed, the key-check record changed by
    ///   another process cannot be opened with this key, or the back end fails (`.crypto`). Files that
    ///   cannot be read are reported as `readFailed` and skipped.
    /// - Complexity: O(*n*) full reads and AES-GCM decryptions for *n* entry files, O(total bytes) in
    ///   all, on the caller's thread.
    ///
    /// Thread-safe.
    public func verify(progress: ((Int, Int) -> Void)? = nil) throws -> DiskCacheVerifyReport {
        try engine.verify(progress: progress) { _, _ in }
    }

    /// Lists the live entries with their decrypted keys, sizes on disk, expiry, last access and tags.
    ///
    /// Corrupt, expired and tag-stale entries met on the way are removed, as a read would. Entries whose key
    /// bytes are not a `Key` (written by a cache with another key type) are skipped.
    ///
    /// Listing does not change any entry's recency.
    ///
    /// - Returns: The entries, least recently used first.
    /// - Throws: `CacheError` when the store folder cannot be listed, the key-check record changed by
    ///   another process cannot be opened with this key, or the back end fails (`.crypto`).
    /// - Complexity: O(*n*) full reads and AES-GCM decryptions for *n* entry files, then an
    ///   O(*n* log *n*) sort, on the caller's thread.
    ///
    /// Thread-safe.
    public func listEntries() throws -> [DiskCacheEntryInfo<Key>] {
        var entries: [DiskCacheEntryInfo<Key>] = []
        _ = try engine.verify(progress: nil) { record, stored in
            guard let key = Key(canonicalBytes: record.keyBytes) else { return }
            // A tagged record's tag block leads its value; the sweep has already judged the tags current.
            let tags = record.header.hasTags ? TagBlock.decode(record.valueBytes).map { Set($0.versions.keys) } : nil
            entries.append(
                DiskCacheEntryInfo(
                    key: key, size: stored.size, expiresAt: record.header.expiresAt,
                    lastAccess: stored.lastAccess, tags: tags ?? []))
        }
        return entries.sorted { $0.lastAccess < $1.lastAccess }
    }

    /// A snapshot of the counters since the store was created, across every process that used it.
    ///
    /// Each instance merges its counts into the store's statistics file on ``flushStatistics()`` and when
    /// it is deinitialized, and a snapshot adds the counts not yet flushed. `errors` counts reads that
    /// failed for a passing reason (permissions, I/O errors; the files were kept); `corruptEntriesRemoved`
    /// counts entries removed because they failed to authenticate, parse, or belonged to an old
    /// master-key epoch. What the store holds now is ``count`` and ``totalBytes``. `loads` and
    /// `loadsShared` count this instance's load-once calls since it was opened; they are not saved in the
    /// statistics file.
    ///
    /// - Complexity: One small file read on the caller's thread.
    ///
    /// Thread-safe.
    public var statistics: CacheStatistics {
        var statistics = engine.statistics()
        loadOnce.count(into: &statistics)
        return statistics
    }

    /// The number of entry files the store holds (a count of entries), expired ones not yet removed
    /// included.
    ///
    /// Reflects other processes' writes as of this process's last scan (every trim rescans). When the
    /// scan fails, the failure is reported to the observer as ``CacheEvent/Kind/readFailed`` and the
    /// total leaves out what could not be read.
    ///
    /// - Complexity: The first call in a process scans the folder (one `lstat` per file, O(*n*)); later
    ///   calls read the in-memory index.
    ///
    /// Thread-safe.
    public var count: Int { engine.totals().count }

    /// The bytes the entry files take on disk (their real sizes: header, nonce and tag included), the
    /// measure ``DiskCacheConfiguration/byteLimit`` limits.
    ///
    /// Reflects other processes' writes as ``count`` does.
    ///
    /// - Complexity: Like ``count``.
    ///
    /// Thread-safe.
    public var totalBytes: Int { engine.totals().bytes }

    /// Merges this instance's counters into the store's statistics file, under the store's `flock`.
    /// Also done when the instance is deinitialized.
    ///
    /// Never recreates a store deleted from outside: the counts then stay pending. A store opened
    /// read-only is skipped silently (its counts stay in memory).
    ///
    /// - Throws: `CacheError` when the statistics file cannot be written; the counts are kept for the
    ///   next attempt.
    /// - Complexity: One small file read and one atomic write, on the caller's thread, after waiting for
    ///   the store's `flock`; nothing when there is nothing to flush.
    ///
    /// Thread-safe.
    public func flushStatistics() throws {
        try engine.flushStatistics()
    }
}

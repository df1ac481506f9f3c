import CacheCore

/// A snapshot of a ``DiskCache``'s counters and totals.
///
/// Counters (hits, misses, insertions, evictions, expirations, corrupt entries) count since the store
/// was created, across every process that used it: each instance merges its counts into the store's
/// statistics file on ``DiskCache/flushStatistics()`` and when it is deinitialized, and a snapshot adds
/// the counts not yet flushed. ``base``'s `count` and `totalCost` describe the entry files on disk now;
/// `totalCost` is their real size in bytes.
///
/// A plain value; `Sendable` and thread-safe. Reading it does no I/O (``DiskCache/statistics`` does).
public struct DiskCacheStatistics: Sendable, Hashable {
    /// The counters and totals shared by every tier; `totalCost` is in bytes on disk.
    public var base = CacheStatistics()
    /// Entries removed because they failed to authenticate, parse, or belonged to an old key epoch.
    public var corruptEntriesRemoved = 0
    /// Reads that failed for a passing reason (permissions, I/O errors); the files were kept.
    public var readFailures = 0
    /// The byte limit (``DiskCacheConfiguration/maxBytes``, bytes on disk), or `nil` for none.
    public var maxBytes: Int? = nil
    /// The entry-count limit (``DiskCacheConfiguration/maxEntries``, a count), or `nil` for none.
    public var maxEntries: Int? = nil

    /// Creates a snapshot.
    ///
    /// - Parameters:
    ///   - base: The shared counters and totals.
    ///   - corruptEntriesRemoved: Corrupt or old-epoch entries removed.
    ///   - readFailures: Reads that failed for a passing reason.
    ///   - maxBytes: The byte limit, or `nil`.
    ///   - maxEntries: The entry-count limit, or `nil`.
    public init(
        base: CacheStatistics = CacheStatistics(),
        corruptEntriesRemoved: Int = 0,
        readFailures: Int = 0,
        maxBytes: Int? = nil,
        maxEntries: Int? = nil
    ) {
        self.base = base
        self.corruptEntriesRemoved = corruptEntriesRemoved
        self.readFailures = readFailures
        self.maxBytes = maxBytes
        self.maxEntries = maxEntries
    }
}

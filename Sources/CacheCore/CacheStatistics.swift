/// A snapshot of a cache's counters, taken at one instant.
///
/// Counters start at zero when the cache is created (or, for a persistent tier, when the store is
/// created) and only grow; ``count`` and ``totalCost`` describe what is held now.
///
/// Thread safety: a plain value; `Sendable`. Reading it never touches the cache it came from.
public struct CacheStatistics: Sendable, Hashable {
    /// Reads that returned a live entry.
    public var hits: Int
    /// Reads that found no live entry (absent, expired or corrupt).
    public var misses: Int
    /// Entries stored, including replacements of an existing key.
    public var insertions: Int
    /// Entries dropped to honour a count, cost or size limit, or by a trim.
    public var evictions: Int
    /// Entries dropped because they had expired.
    public var expirations: Int
    /// Entries held now.
    public var count: Int
    /// Sum of the costs of the entries held now, in the tier's cost units (bytes on disk for the disk
    /// tier).
    public var totalCost: Int

    /// Creates a snapshot.
    ///
    /// - Parameters:
    ///   - hits: Reads that returned a live entry.
    ///   - misses: Reads that found no live entry.
    ///   - insertions: Entries stored.
    ///   - evictions: Entries dropped by a limit or a trim.
    ///   - expirations: Entries dropped because they expired.
    ///   - count: Entries held now.
    ///   - totalCost: Sum of the costs held now.
    public init(
        hits: Int = 0,
        misses: Int = 0,
        insertions: Int = 0,
        evictions: Int = 0,
        expirations: Int = 0,
        count: Int = 0,
        totalCost: Int = 0
    ) {
        self.hits = hits
        self.misses = misses
        self.insertions = insertions
        self.evictions = evictions
        self.expirations = expirations
        self.count = count
        self.totalCost = totalCost
    }

    /// Hits divided by reads (hits plus misses), from 0 to 1; 0 before the first read.
    public var hitRatio: Double {
        // In floating point: counters read back from a store may be near `Int.max`, and an integer sum
        // would trap on overflow. Negative counts (never produced by Strata) count as 0.
        let hits = Double(max(hits, 0))
        let reads = hits + Double(max(misses, 0))
        return reads == 0 ? 0 : hits / reads
    }
}

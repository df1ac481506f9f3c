/// A snapshot of a cache's counters, taken at one instant: the one statistics shape of every tier.
///
/// `MemoryCache`, `DiskCache` and `MultiCache` (and the Redis tier) each answer `statistics` with this
/// type, so `cache.statistics.hits` reads the same on every tier. A counter a tier cannot produce stays 0
/// there (a memory tier has no corrupt entries; only a tier with load-once counts loads). What is held
/// now is not a counter: read it from the tier (`count`, and `totalCost` in memory or `totalBytes` on
/// disk). What only one tier counts lives beside `statistics` under its own property (for example
/// `MultiCache`'s `tierStatistics`), never inside this type.
///
/// Counters start at zero when the cache is created (or, for a persistent tier, when the store is
/// created) and only grow.
///
/// Thread safety: a plain value; `Sendable`. Reading it never touches the cache it came from.
public struct CacheStatistics: Sendable, Hashable {
    /// Reads that returned a live entry.
    public var hits: Int
    /// Reads that found no live entry (absent, expired or corrupt).
    public var misses: Int
    /// Entries stored, including replacements of an existing key.
    public var insertions: Int
    /// Entries dropped to honour a count, cost or byte limit, or by a trim.
    public var evictions: Int
    /// Entries dropped because they had expired.
    public var expirations: Int
    /// Entries removed because they were damaged or unreadable as entries (failed authentication, a
    /// format that does not parse, an old master-key epoch). Always 0 in memory.
    public var corruptEntriesRemoved: Int
    /// Operations that failed for a passing reason (an I/O or permission error on disk, a call into a
    /// tier that threw in `MultiCache`); the data was kept.
    public var errors: Int
    /// Load-once loader calls run (`value(forKey:orLoad:)`).
    public var loads: Int
    /// Load-once callers that waited on a load another caller had started, instead of running their own.
    public var loadsShared: Int

    /// Creates a snapshot.
    ///
    /// - Parameters:
    ///   - hits: Reads that returned a live entry.
    ///   - misses: Reads that found no live entry.
    ///   - insertions: Entries stored.
    ///   - evictions: Entries dropped by a limit or a trim.
    ///   - expirations: Entries dropped because they expired.
    ///   - corruptEntriesRemoved: Damaged entries removed.
    ///   - errors: Operations that failed for a passing reason.
    ///   - loads: Loader calls run.
    ///   - loadsShared: Callers that waited on another caller's load.
    public init(
        hits: Int = 0,
        misses: Int = 0,
        insertions: Int = 0,
        evictions: Int = 0,
        expirations: Int = 0,
        corruptEntriesRemoved: Int = 0,
        errors: Int = 0,
        loads: Int = 0,
        loadsShared: Int = 0
    ) {
        self.hits = hits
        self.misses = misses
        self.insertions = insertions
        self.evictions = evictions
        self.expirations = expirations
        self.corruptEntriesRemoved = corruptEntriesRemoved
        self.errors = errors
        self.loads = loads
        self.loadsShared = loadsShared
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

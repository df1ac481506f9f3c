/// The counters a ``MultiCache`` keeps under one lock; ``MultiCache/statistics`` and
/// ``MultiCache/tierStatistics`` are read from them.
struct MultiCacheCounters: Sendable {
    /// Per-tier counters, fastest tier first.
    var tiers: [MultiCacheTierStatistics]
    /// Reads that found an entry in some tier.
    var hits = 0
    /// Reads that found no entry in any tier.
    var misses = 0
}

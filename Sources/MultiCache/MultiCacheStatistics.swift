/// A snapshot of a ``MultiCache``'s counters.
///
/// Counters start at zero when the cache is created and only grow. They count calls through the
/// `MultiCache` only; each tier's own statistics also count calls made to it directly.
///
/// A plain value; `Sendable` and thread-safe.
public struct MultiCacheStatistics: Sendable, Hashable {
    /// The counters of one tier.
    ///
    /// A plain value; `Sendable` and thread-safe.
    public struct Tier: Sendable, Hashable {
        /// The tier's name.
        public var name: String
        /// Reads this tier answered with an entry.
        public var hits: Int
        /// Reads this tier was asked and answered with `nil`.
        public var misses: Int
        /// Entries copied into this tier after a hit in a slower tier.
        public var writeBacks: Int
        /// Calls into this tier that threw: reads, write-backs, writes, removals, stores of loaded values.
        public var errors: Int

        /// Creates a tier's counters.
        ///
        /// - Parameters:
        ///   - name: The tier's name.
        ///   - hits: Reads answered with an entry.
        ///   - misses: Reads answered with `nil`.
        ///   - writeBacks: Entries copied into the tier.
        ///   - errors: Calls that threw.
        public init(name: String, hits: Int = 0, misses: Int = 0, writeBacks: Int = 0, errors: Int = 0) {
            self.name = name
            self.hits = hits
            self.misses = misses
            self.writeBacks = writeBacks
            self.errors = errors
        }
    }

    /// Per-tier counters, fastest tier first.
    public var tiers: [Tier]
    /// Reads of the `MultiCache` that found an entry in some tier.
    public var hits: Int
    /// Reads of the `MultiCache` that found no entry in any tier. A read that throws because every tier
    /// failed is neither a hit nor a miss.
    public var misses: Int
    /// Times a load-once loader was run.
    public var loadsRun: Int
    /// Load-once callers that joined a load another caller had started, instead of running their own.
    public var loadsShared: Int

    /// Creates a snapshot.
    ///
    /// - Parameters:
    ///   - tiers: Per-tier counters, fastest first.
    ///   - hits: Reads that found an entry.
    ///   - misses: Reads that found none.
    ///   - loadsRun: Loader runs.
    ///   - loadsShared: Callers that joined another caller's load.
    public init(tiers: [Tier], hits: Int = 0, misses: Int = 0, loadsRun: Int = 0, loadsShared: Int = 0) {
        self.tiers = tiers
        self.hits = hits
        self.misses = misses
        self.loadsRun = loadsRun
        self.loadsShared = loadsShared
    }

    /// Hits divided by reads (hits plus misses), from 0 to 1; 0 before the first read.
    public var hitRatio: Double {
        let reads = hits + misses
        return reads == 0 ? 0 : Double(hits) / Double(reads)
    }
}

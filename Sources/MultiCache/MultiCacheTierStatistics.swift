/// The counters of one tier of a ``MultiCache``, beside its overall ``MultiCache/statistics``.
///
/// Counters start at zero when the cache is created and only grow. They count calls through the
/// `MultiCache` only; the tier's own `statistics` also counts calls made to it directly.
///
/// A plain value; `Sendable` and thread-safe.
public struct MultiCacheTierStatistics: Sendable, Hashable {
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

/// How a ``MemoryCache`` chooses which entries to keep when it is over a limit.
///
/// ```swift
/// let pages = try MemoryCache<URL, Data>(countLimit: 10_000, policy: .windowTinyLFU)
/// ```
///
/// - ``leastRecentlyUsed`` (the default) evicts the entry used longest ago. Every new entry is admitted.
///   It adapts at once when the popular keys change, but a scan of keys read once can flush every entry
///   that is read often.
/// - ``windowTinyLFU`` keeps the entries used most often of late. New entries wait in a small LRU
///   *window*; one that leaves the window enters the main region only if a compact frequency sketch
///   says it has been used more often than the entry it would push out. Scans and one-hit keys then
///   pass through the window without flushing the frequent keys, and the window's size adapts while
///   the cache runs, so that workloads where recency matters more than frequency keep LRU's hit ratio.
///
/// `Docs/MemoryCache.md` says when to choose which and what each costs, with measured hit ratios.
///
/// A struct over a private enum, so that adding a policy never breaks a caller's `switch`.
public struct EvictionPolicy: Sendable, Hashable, CustomStringConvertible {
    enum Kind: Sendable, Hashable {
        case leastRecentlyUsed
        case windowTinyLFU
    }

    let kind: Kind

    /// Evicts the least recently used entry; every new entry is admitted.
    ///
    /// With one shard the order is exact LRU; each shard of a sharded cache evicts by second chance
    /// (CLOCK), an approximation of it.
    public static let leastRecentlyUsed = EvictionPolicy(kind: .leastRecentlyUsed)

    /// W-TinyLFU with an adaptive window: an LRU window for new entries in front of a segmented LRU main
    /// region (probation and protected), with admission to the main region decided by estimated use
    /// frequency.
    ///
    /// Frequencies are counted in a count-min sketch of 4-bit counters that are all halved periodically,
    /// so old popularity fades (Einziger, Friedman and Manes, "TinyLFU: A Highly Efficient Cache
    /// Admission Policy", ACM Transactions on Storage 13(4), 2017). The window starts at 1% of the cache
    /// and adapts like the lists of ARC (Megiddo and Modha, FAST 2003): each region remembers the keys it
    /// recently evicted in a small filter, and inserting one of them again moves room to that region: 8
    /// entries' worth (at most 4% of a small cache), up to three times as much while such hits keep coming
    /// from one side. (Caffeine adapts its window by hill climbing on the hit ratio instead;
    /// `Docs/MemoryCache.md` compares the two.) An entry whose cost exceeds the window's share of the
    /// cost limit skips the window and must beat, one by one, every entry it would push out of the main
    /// region, so one large entry cannot flush the cache. A store can therefore be turned away without
    /// an error: the entry is counted as inserted and evicted, and a read of its key misses.
    ///
    /// Each shard of a sharded cache runs its own policy on its share of the limits.
    public static let windowTinyLFU = EvictionPolicy(kind: .windowTinyLFU)

    /// The policy's name: `leastRecentlyUsed` or `windowTinyLFU`.
    public var description: String {
        switch kind {
        case .leastRecentlyUsed: "leastRecentlyUsed"
        case .windowTinyLFU: "windowTinyLFU"
        }
    }
}

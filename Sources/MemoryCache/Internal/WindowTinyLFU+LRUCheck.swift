/// W-TinyLFU checked against LRU: when a sample of the requests shows that plain recency would have hit
/// clearly more often than the policy did, the window grows by a large step.
///
/// ## Why
/// Ghost hits size the window well on Zipf, scans, loops and a popular set that moves, but they cannot see
/// traffic where only recency pays (see ``MiniatureLRU``): there the window stays at its smallest and the
/// cache keeps a fraction of LRU's hits. Caffeine climbs on the sampled hit ratio for every move of its
/// window, which measured here lost 2 to 10 points to sampling noise on Zipf and loops
/// (Docs/MemoryCache.md); this check is coarser and rarer: it acts only when LRU, simulated on the same
/// sampled requests, hit more than ``lruCheckMargin`` of them more, which none of the trace suite's
/// workloads shows. It grows the window by ``lruCheckStep`` of the cache or more and makes that size a floor
/// (``windowFloor``) that ghost hits cannot shrink the window below: without it the main region's ghost
/// hits undid each growth long before the next check. Each check that finds LRU no longer that far ahead
/// lowers the floor by half a step, so ghost hits size the window again once recency stops paying.
extension WindowTinyLFU {
    /// Sampled requests between two comparisons: twice the miniature's entries (so about twice the table's
    /// entries in all requests), at least 256. Measured on the trace suite (Docs/MemoryCache.md): eight
    /// times and at least 1,024 left a working set that slides 3.2 points below LRU at 10,000 entries, four
    /// times and 512 1.6, while the cache climbed from its smallest window.
    @inlinable
    var lruCheckPeriod: Int { max(2 * miniature.entries, 256) }

    /// How many more of the sampled requests LRU must have hit for the window to grow: 5%.
    static var lruCheckMargin: Double { 0.05 }

    /// How far one check grows the window at least: a quarter of the cache (twice the margin when that is
    /// more, so that a cache far behind LRU gets there in one or two checks).
    static var lruCheckStep: Double { 0.25 }

    /// Runs a request for the key with hash `hash` and cost `cost` through the miniature LRU when the key is
    /// sampled, and counts it when `counted` (a hit, or the insertion that fills a read that missed; other sets
    /// are run through uncounted, so that the miniature holds what the table holds, see
    /// ``followsReadMiss(missesSoFar:)``).
    ///
    /// - Parameters:
    ///   - hit: Whether the table hit.
    ///   - held: The entries the table holds and their total cost, for the miniature's limits.
    @inlinable
    mutating func noteSampledRequest(
        _ hash: UInt32, cost: Int, hit: Bool, counted: Bool = true, held: (count: Int, cost: Int)
    ) {
        guard miniature.samples(hash) else { return }
        // See "The limits follow the keys the table holds" in MiniatureLRU.
        let rate = miniature.rate
        let countLimit =
            self.countLimit < unlimitedCount
            ? sampledHeld.count + max(self.countLimit - held.count, 0) / rate : Int.max
        let costLimit =
            self.costLimit < Int.max ? sampledHeld.cost + max(self.costLimit - held.cost, 0) / rate : Int.max
        let miniatureHit = miniature.access(hash, cost: cost, countLimit: countLimit, costLimit: costLimit)
        guard counted else { return }
        sampled.requests &+= 1
        if miniatureHit { sampled.miniatureHits &+= 1 }
        if hit { sampled.tableHits &+= 1 }
    }

    /// Whether an insertion of a new key fills a read that missed: `true`, and the miss is used up, while the
    /// table's misses so far (`missesSoFar`, its statistics' count) exceed those earlier insertions used,
    /// at most ``unmatchedMissLimit`` of them remembered.
    ///
    /// A request is a read, and a cache's misses are filled by a set of the key: counting that set, and no
    /// other, counts the reads that missed without hashing their keys on the read path. A set that no read
    /// asked for (a write-through, a prefetch) is no request: counted, it could only ever score for LRU,
    /// whose miniature may still hold a key the table turned away, while the reverse (the table holding a
    /// key LRU would not) is a replacement and was never counted; an adversarial run grew the window on Zipf
    /// reads beside such writes, 3.5 to 5 points of hits lost. A miss is matched to the next insertion, of
    /// whichever key: exact for the usual read, miss, set; an approximation when reads that are never filled
    /// mix with blind sets.
    @inlinable
    mutating func followsReadMiss(missesSoFar: Int) -> Bool {
        // Statistics carried over from a replaced table, or reset, are taken as they come.
        if missesMatched > missesSoFar || missesSoFar - missesMatched > Self.unmatchedMissLimit {
            missesMatched = max(missesSoFar - Self.unmatchedMissLimit, 0)
        }
        guard missesMatched < missesSoFar else { return false }
        missesMatched += 1
        return true
    }

    /// How many reads that missed an insertion may still fill: 16, a few threads' reads in flight at once.
    /// (A burst of misses never filled must not make the blind sets after it count.)
    @usableFromInline static var unmatchedMissLimit: Int { 16 }

    /// Counts an entry of hash `hash` and cost `cost` the table now holds (`sign` 1) or no longer holds (-1)
    /// among the sampled ones.
    @inlinable
    mutating func noteSampledHeld(_ hash: UInt32, cost: Int, sign: Int) {
        guard miniature.samples(hash) else { return }
        sampledHeld = (sampledHeld.count &+ sign, sampledHeld.cost &+ sign &* cost)
    }

    /// Trims the miniature as the table was trimmed (to the sampled entries it still holds) and starts a new
    /// period. A trim evicts, so its keys are not forgotten one by one; without this the miniature kept them
    /// all, hit every one that came back while the table missed, and the next check grew the window on a
    /// Zipf workload after a memory-pressure trim.
    ///
    /// - Complexity: O(*k*) in the miniature's entries evicted.
    @usableFromInline
    mutating func noteTrimmed() {
        miniature.trim(toCount: sampledHeld.count, cost: costLimit < Int.max ? sampledHeld.cost : Int.max)
        sampled = (0, 0, 0)
    }

    /// Forgets the key with hash `hash` in the miniature, if sampled: the table removed it (a removal, an
    /// expiry, or a replacement, which ``noteSampledRequest(_:cost:hit:counted:)`` then runs through again).
    @inlinable
    mutating func forgetSampled(_ hash: UInt32) {
        if miniature.samples(hash) { miniature.forget(hash) }
    }

    /// Compares the sampled hits and starts a new period: when LRU hit more than ``lruCheckMargin`` of the
    /// sampled requests more, raises the window's floor to its share plus ``lruCheckStep`` (or twice the
    /// margin) and the window with it; otherwise lowers the floor by half a step.
    ///
    /// - Returns: Whether the regions' budgets changed.
    @usableFromInline
    mutating func checkAgainstLRU() -> Bool {
        defer { sampled = (0, 0, 0) }
        let margin = Double(sampled.miniatureHits - sampled.tableHits) / Double(sampled.requests)
        if margin > Self.lruCheckMargin {
            windowFloor = min(max(windowFloor, windowShare) + max(Self.lruCheckStep, 2 * margin), 1)
        } else {
            windowFloor = max(windowFloor - Self.lruCheckStep / 2, 0)
        }
        guard windowShare < windowFloor else { return false }
        windowShare = windowFloor
        ghostRun = 0
        resizeRegions()
        return true
    }
}

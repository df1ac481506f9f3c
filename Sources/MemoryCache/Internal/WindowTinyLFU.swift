/// The regions of a W-TinyLFU table. An entry's region sits in the top 2 bits of its slot's stamp, which
/// a hit reads and writes anyway, so learning the region costs a hit no extra memory access.
@usableFromInline
enum PolicyRegion {
    /// New entries, in LRU order; the window's share of the cache adapts (see ``WindowTinyLFU``).
    @inlinable static var window: UInt32 { 0 }
    /// Main-region entries not read since they were admitted (or demoted), in LRU order: the victims.
    @inlinable static var probation: UInt32 { 1 }
    /// Main-region entries read while on probation, in LRU order; at most 80% of the main region.
    @inlinable static var protected: UInt32 { 2 }
    /// Entries pushed out of the window that wait, during one insertion, to duel a victim for a place
    /// in the main region; they are in no queue.
    @inlinable static var candidate: UInt32 { 3 }
    /// Where the region sits in a stamp.
    @inlinable static var shift: UInt32 { 30 }
    /// The stamp bit that marks a window or protected entry of a shard's table as read since it was
    /// queued (second chance; see `ShardTable.touchByFrequency`). Records never carry it.
    @inlinable static var referencedBit: UInt32 { 1 << 29 }
}

/// The state of the W-TinyLFU policy of one ``ShardTable`` (one shard): the frequency sketch, one recency
/// queue per region, each slot's key hash, each region's size and budget, and the ghosts that size the window.
///
/// ## Design
/// W-TinyLFU as described by Einziger, Friedman and Manes ("TinyLFU: A Highly Efficient Cache Admission
/// Policy", ACM ToS 2017): a small LRU window for new entries in front of a segmented LRU main region
/// (20% probation, 80% protected), and admission from the window to the main region by the estimated
/// frequencies of the candidate and the victim.
///
/// The window starts at 1% of the cache, the paper's choice for skewed workloads, and its share moves
/// while the cache runs, by ghost hits, as ARC sizes its two lists (Megiddo and Modha, FAST 2003): each
/// region remembers the keys it recently evicted, and the insertion of a key the window evicted (or
/// rejected) grows the window by ``ghostStep`` entries' worth, that of a key the main region evicted
/// shrinks it by as much. Caffeine moves it by hill climbing on the sampled hit ratio instead (Einziger,
/// Eytan, Friedman and Manes, "Adaptive Software Cache Management", Middleware 2018); measured on the
/// benchmark's traces (`Docs/MemoryCache.md`), that lost 2 to 10 points on Zipf and loops to sampling
/// noise, and a hit-ratio guard over ghost moves reacted too late to stop a loop.
///
/// **How far back the window's ghosts look is the window's own size.** A window ghost hit says "a larger
/// window would have hit" only if the key came back soon after it left: a key that returns after *d*
/// window evictions needs a window *d* entries larger. ARC's ghosts, and ours until issue 26, remember
/// a fixed fraction of the cache, so a loop over slightly more keys than the cache holds (whose rejected
/// keys all come back after about the loop's excess in evictions) read as endless window ghost hits: the
/// window grew towards the whole cache, where a loop gets no hits at all, and W-TinyLFU kept 9 points
/// fewer hits than with a fixed 1% window on a loop mixed with Zipf traffic. The window's ghosts now
/// remember its last one to two windows' worth of evictions (at least 1% of the cache and 2 keys, at most
/// a quarter of the cache): a key back within that distance is evidence that doubling the window would catch it, which is
/// the step a ghost hit can justify; a loop's keys come back far later and move nothing. The main
/// region's ghosts still remember a quarter to half of the cache, so evidence for a larger main region
/// is seen at any window size. Because the window's ghosts see only short reuse, each of their hits
/// moves ``ghostStep`` entries (at most 4% of a small table's), so that a popular set that moves still
/// grows the window within a phase; a run of hits on one side moves it up to three times as far per hit
/// (``ghostStepMultiple(forRun:inShard:)``), so that the burst of window ghost hits a change of popular
/// set sends reaches the window's best size early in the burst, while hits that alternate keep the base
/// step. The shards of a sharded cache, which each see a part of the traffic, look back twice as far and
/// move a smaller step that a run grows faster (*A shard's ghosts*, `WindowTinyLFU+Shards.swift`).
///
/// Ghost hits cannot see traffic where only recency pays (its keys come back later than the window's ghosts
/// remember), so a miniature LRU cache runs on a sample of the requests beside them, and a check that finds
/// LRU clearly ahead grows the window and holds it there for a while (`WindowTinyLFU+LRUCheck.swift`).
///
/// ## Hits go through a buffer
/// A hit does not update the policy: it appends its slot to the hit buffer (``hitBuffer``), as Caffeine's
/// read buffer does. The table applies the buffered hits in order (counting each in the statistics and
/// the sketch, refreshing its recency, promoting a probation entry) when the buffer fills, and before
/// every other operation that reads or changes the policy's state (an insertion, a removal, an
/// eviction, a trim, an expired entry dropped, an invariant check). Every decision therefore sees
/// exactly the state it would have seen had each hit been applied at once, and no buffered slot can be
/// freed or reused before its hit is applied. What the buffer buys: the fifteen sketch updates and
/// stamp reads go to unrelated cache lines and do not depend on each other, so the processor overlaps
/// their memory misses, where the hit itself (whose lock release waits for its loads) would pay each
/// miss in full.
///
/// The buffer is one 64-byte line of its own, holding its count beside the slots, and it doubles as the
/// count of hits not yet added to the table's counters, so a hit writes that line and nothing else of
/// the table. With two threads on a sharded cache each line a hit writes may have to be fetched back
/// from the other core: the buffer used to keep its count in the table, slot and hash pairs in a
/// 128-byte allocation whose lines neighbouring shards' buffers shared, and the hit in the counters'
/// line, four such lines where an LRU shard's hit writes two (its lock's and its counters').
///
/// A plain struct (not generic, so unspecialized code reaches it without generic metadata), stored
/// inline in the table and used only under the table's lock. The table calls ``deallocate()``.
@usableFromInline
struct WindowTinyLFU {
    @usableFromInline var sketch: FrequencySketch
    /// Per slot: the key's hash, for the sketch (read when buffered hits are applied), admission duels and
    /// ghosts.
    @usableFromInline var hashes: UnsafeMutablePointer<UInt32>
    @usableFromInline var window = RecencyQueue()
    @usableFromInline var probation = RecencyQueue()
    @usableFromInline var protected = RecencyQueue()
    /// Entries and total cost per region, in ``PolicyRegion`` order.
    @usableFromInline var counts: (Int, Int, Int, Int) = (0, 0, 0, 0)
    @usableFromInline var costs: (Int, Int, Int, Int) = (0, 0, 0, 0)
    /// Keys recently rejected by admission or evicted from the window: inserting one again means a
    /// larger window would have hit.
    @usableFromInline var windowGhosts: GhostFilter
    /// Keys recently evicted from the main region: inserting one again means a larger main region would
    /// have hit.
    @usableFromInline var mainGhosts: GhostFilter
    /// The ghost hits in a row on one side, with its sign: positive for window ghost hits, negative for
    /// main ghost hits (see ``ghostStepMultiple(forRun:inShard:)``); 0 before the first.
    @usableFromInline var ghostRun = 0
    /// Whether the table is one shard of a sharded cache, whose window adapts by the shard rule (see
    /// *A shard's ghosts* in `WindowTinyLFU+Shards.swift`).
    @usableFromInline let isShard: Bool
    /// Feedback on admission duels: the recent victims, and the margin their coming back turns on
    /// (``DuelRegret``).
    @usableFromInline var duelRegret = DuelRegret()
    /// Slots waiting as candidates during one insertion; kept to reuse its storage.
    @usableFromInline var candidates: [Int32] = []
    /// The hit buffer: one cache line of its own (64 bytes, 64-byte aligned) holding the number of hits
    /// not yet applied in its first word and their slots, oldest first, in the next ``hitBufferSize``
    /// words. The count doubles as the hits not yet added to the table's counters.
    @usableFromInline let hitBuffer: UnsafeMutablePointer<UInt32>
    /// The bits of the sketch words `ShardTable.applyBufferedHits()` reads ahead; kept only so that those
    /// reads have a use.
    @usableFromInline var touchedSketchWords: UInt64 = 0

    /// How many hits the buffer holds before they are applied: what fits in its line beside the count.
    @inlinable static var hitBufferSize: Int { 15 }

    /// The size and alignment of the hit buffer: one cache line.
    static var hitBufferBytes: Int { 64 }

    /// The table's limits; `unlimitedCount` and `Int.max` mean unlimited.
    @usableFromInline let countLimit: Int
    @usableFromInline let costLimit: Int
    @usableFromInline let unlimitedCount: Int
    /// The window's share of each limit, in 0...1.
    @usableFromInline var windowShare = 0.01
    @usableFromInline var windowCountLimit = 0
    @usableFromInline var windowCostLimit = 0
    @usableFromInline var protectedCountLimit = 0
    @usableFromInline var protectedCostLimit = 0
    // The check against LRU's state comes last, after everything a hit reads, whose layout it would move.
    /// LRU run on a sample of the requests, and the requests, its hits and the table's hits since the last
    /// comparison (``noteSampledRequest(_:cost:hit:counted:held:)``, `WindowTinyLFU+LRUCheck.swift`).
    @usableFromInline var miniature: MiniatureLRU
    @usableFromInline var sampled = (requests: 0, miniatureHits: 0, tableHits: 0)
    /// How many of the table's misses insertions have filled (``followsReadMiss(missesSoFar:)``).
    @usableFromInline var missesMatched = 0
    /// The count and total cost of the entries the table holds whose keys the miniature samples.
    @usableFromInline var sampledHeld = (count: 0, cost: 0)
    /// The smallest share ghost hits may shrink the window to, raised by checks that found LRU clearly ahead.
    @usableFromInline var windowFloor = 0.0

    /// The protected segment's share of the main region, as in the segmented LRU of the paper.
    static var protectedShare: Double { 0.8 }

    /// Creates the state for a table with these limits, with hash storage for `slotCapacity` slots.
    ///
    /// - Parameters:
    ///   - unlimitedCount: The count limit that means "unlimited" in the owning table.
    ///   - isShard: Whether the table is one shard of a sharded cache (its window then adapts by the shard
    ///     rule, `WindowTinyLFU+Shards.swift`).
    init(countLimit: Int, costLimit: Int, unlimitedCount: Int, slotCapacity: Int, isShard: Bool = false) {
        self.isShard = isShard
        self.countLimit = countLimit
        self.costLimit = costLimit
        self.unlimitedCount = unlimitedCount
        // The sketch and the ghosts start small and grow with the entries held, up to the count limit.
        sketch = FrequencySketch(capacity: min(countLimit, 64))
        windowGhosts = GhostFilter(generationSize: Self.ghostGeneration(forSketchCapacity: sketch.capacity))
        mainGhosts = GhostFilter(generationSize: Self.ghostGeneration(forSketchCapacity: sketch.capacity))
        // A table of another policy passes no slots and gets a miniature of one entry it never uses.
        miniature = MiniatureLRU(
            entries: slotCapacity == 0 ? 1 : countLimit < unlimitedCount ? countLimit : min(countLimit, 64))
        hashes = .allocate(capacity: slotCapacity)
        hitBuffer = UnsafeMutableRawPointer.allocate(byteCount: Self.hitBufferBytes, alignment: Self.hitBufferBytes)
            .bindMemory(to: UInt32.self, capacity: Self.hitBufferBytes / 4)
        hitBuffer.initialize(repeating: 0, count: Self.hitBufferBytes / 4)
        resizeRegions()
    }

    func deallocate() {
        sketch.deallocate()
        UnsafeMutableRawPointer(hitBuffer).deallocate()
        hashes.deallocate()
        miniature.deallocate()
        windowGhosts.deallocate()
        mainGhosts.deallocate()
    }

    // MARK: - Hits

    /// The number of hits buffered and not yet applied (nor counted).
    @inlinable
    var bufferedHitCount: Int { Int(hitBuffer[0]) }

    /// The slot of buffered hit `position` (0 is the oldest).
    @inlinable
    func bufferedHit(_ position: Int) -> Int32 { Int32(bitPattern: hitBuffer[position &+ 1]) }

    /// Buffers a hit on slot `slot`: two stores to the buffer's one line.
    ///
    /// Not `mutating`: the buffer is reached through a pointer, so a hit writes nothing in the table.
    ///
    /// - Returns: Whether the buffer is now full, and the table must apply it.
    @inlinable
    func bufferHit(_ slot: Int32) -> Bool {
        let count = hitBuffer[0] &+ 1
        hitBuffer[Int(count)] = UInt32(bitPattern: slot)
        hitBuffer[0] = count
        return Int(count) == Self.hitBufferSize
    }

    /// Empties the hit buffer.
    @inlinable
    func clearHitBuffer() { hitBuffer[0] = 0 }

    // MARK: - Regions

    @inlinable
    func count(of region: UInt32) -> Int { sizes(of: region).count }

    @inlinable
    func cost(of region: UInt32) -> Int { sizes(of: region).cost }

    /// The entry count and total cost of `region`.
    @inlinable
    func sizes(of region: UInt32) -> (count: Int, cost: Int) {
        switch region {
        case PolicyRegion.window: (counts.0, costs.0)
        case PolicyRegion.probation: (counts.1, costs.1)
        case PolicyRegion.protected: (counts.2, costs.2)
        default: (counts.3, costs.3)
        }
    }

    /// Adds `count` entries of total cost `cost` (both may be negative) to `region`'s sizes.
    @inlinable @inline(__always)
    mutating func adjust(_ region: UInt32, count: Int, cost: Int) {
        switch region {
        case PolicyRegion.window: (counts.0, costs.0) = (counts.0 &+ count, costs.0 &+ cost)
        case PolicyRegion.probation: (counts.1, costs.1) = (counts.1 &+ count, costs.1 &+ cost)
        case PolicyRegion.protected: (counts.2, costs.2) = (counts.2 &+ count, costs.2 &+ cost)
        default: (counts.3, costs.3) = (counts.3 &+ count, costs.3 &+ cost)
        }
    }

    @inlinable
    var windowIsOver: Bool { counts.0 > windowCountLimit || costs.0 > windowCostLimit }

    @inlinable
    var protectedIsOver: Bool { counts.2 > protectedCountLimit || costs.2 > protectedCostLimit }

    /// Sets each region's budget from `windowShare`: the window gets its share of each limit (at least
    /// one entry), the protected segment 80% of the rest.
    mutating func resizeRegions() {
        func share(_ limit: Int, unlimited: Int, _ fraction: Double) -> Int {
            guard limit < unlimited else { return unlimited }
            // A share of all of it is the limit itself: within 511 of Int.max a limit's Double rounds up
            // to 2^63, which no Int holds (a window grown to the whole cache trapped here).
            let scaled = (Double(limit) * fraction).rounded(.down)
            return scaled >= Double(limit) ? limit : Int(scaled)
        }
        windowCountLimit = max(share(countLimit, unlimited: unlimitedCount, windowShare), 1)
        windowCostLimit = share(costLimit, unlimited: Int.max, windowShare)
        let mainCount = countLimit >= unlimitedCount ? unlimitedCount : max(countLimit - windowCountLimit, 0)
        let mainCost = costLimit == Int.max ? Int.max : max(costLimit - windowCostLimit, 0)
        protectedCountLimit = share(mainCount, unlimited: unlimitedCount, Self.protectedShare)
        protectedCostLimit = share(mainCost, unlimited: Int.max, Self.protectedShare)
        sizeWindowGhosts()
    }

    /// Makes the window's ghosts remember one generation of as many evictions as the window holds
    /// entries (so one to two windows' worth; twice as many in a shard, ``windowGhostWindows(inShard:)``),
    /// at least ``windowGhostFloorShare`` of the count limit and ``fewestWindowGhosts`` keys, at most
    /// ``ghostGeneration(forSketchCapacity:)`` (and 8); see *How far back the window's ghosts look* above.
    mutating func sizeWindowGhosts() {
        let longest = max(Self.ghostGeneration(forSketchCapacity: sketch.capacity), 8)
        let floor = Int(Double(min(countLimit, sketch.capacity)) * Self.windowGhostFloorShare)
        let shortest = max(floor, Self.fewestWindowGhosts)
        let lookBack = windowCountLimit * Self.windowGhostWindows(inShard: isShard)
        windowGhosts.generationSize = min(max(lookBack, shortest), longest)
    }

    /// The shortest memory of the window's ghosts, as a share of the count limit (of the sketch's entries
    /// while the cache fills): 1%, the window's starting share. Without it a window that shrank
    /// below 1% also shortened the look-back that lets it grow again, and on a popular set that moves a
    /// one-shard cache could stay trapped with a small window (3,000 and 10,000 entries: 1.9 and 1.6
    /// points below LRU, one hash seed 2.5). A loop 20% larger than the cache sends its keys back after
    /// about 20% of the cache in evictions, far beyond 1 to 2%. Measured on the trace suite
    /// (`Docs/MemoryCache.md`): 1.5% or more cost 1.6 points and up on a loop mixed with Zipf at 10,000,
    /// and 1% of the sketch's size (the limit rounded up to a power of two, 1.6% of 10,000) cost 1.0 there
    /// and 10.9 with one hash seed on a loop at four shards of 2,500 entries.
    static var windowGhostFloorShare: Double { 0.01 }

    /// The fewest keys the window's ghosts remember: 2, so that a 250-entry shard's 2-entry window (1% of its
    /// 256-entry sketch) looks back one to two windows as a larger one does. The earlier 8 (four such
    /// windows) grew it on the Zipf half of a loop mixed with Zipf: 2.8 points below the best at four
    /// shards of a 1,000-entry cache, 1.7 with 2 (4 gave 2.1 there, and 1.2 instead of 1.7 below the best
    /// on a popular set that moves; 2 misses fewer targets in all, `Docs/MemoryCache.md`).
    static var fewestWindowGhosts: Int { 2 }

    // MARK: - Sizing the window by ghost hits

    /// Keys each ghost generation holds for a sketch sized for `capacity` entries: a quarter of the
    /// cache, so a region remembers its last quarter to half cache's worth of evictions. Hits on keys
    /// evicted longer ago would call for a resize larger than the evidence supports; measured, half a
    /// cache's memory let Zipf workloads drift off their best window, an eighth reacted too slowly to
    /// a popular set that moves.
    static func ghostGeneration(forSketchCapacity capacity: Int) -> Int { capacity / 4 }

    /// The entries one ghost hit moves between the window and the main region. Measured on the trace
    /// suite (`Docs/MemoryCache.md`): 1 left the window too small on a popular set that moves (3.7 points
    /// below LRU at 3,000 entries), 4 still 3.7 there, 8 within 1.7 and no loss on loops with one shard.
    static var ghostStep: Double { 8 }

    /// The most one ghost hit moves in a small table: 4% of its entries. ``ghostStep`` was measured on
    /// tables of 250 entries and more (shards included), where 8 entries are at most 3.2% of the cache and
    /// this bound never applies; below 200 entries 8 entries would be a larger share (16% of 50), and one
    /// Bloom false positive among the window's ghosts (each lookup has a small chance of one, see
    /// ``GhostFilter``) would then resize a small cache far more than it resizes a large one.
    static var largestGhostStepShare: Double { 0.04 }

    /// The entries one ghost hit moves in a table of `entries` entries: ``ghostStep`` (``shardGhostStep`` in
    /// a shard), at most ``largestGhostStepShare`` of the entries (at least one).
    static func ghostStep(forEntries entries: Int, inShard: Bool = false) -> Double {
        min(inShard ? shardGhostStep : ghostStep, max(Double(entries) * largestGhostStepShare, 1))
    }

    /// How many times ``ghostStep(forEntries:inShard:)`` the `run`-th ghost hit in a row on one side moves
    /// the window: 1 for the first, a quarter more for each one after it, at most
    /// ``largestGhostStepMultiple`` (from the ninth on); in a shard a whole step more for each, at most
    /// ``shardLargestGhostStepMultiple`` (`WindowTinyLFU+Shards.swift`). A hit on the other side ends the run.
    ///
    /// Why: ghost hits that alternate between the sides say the window is near its best size, and the base
    /// step keeps it there; a run on one side says the best size is far, and a fixed step got there too
    /// late. A popular set that moves sends a burst of window ghost hits at each change, and at 1,000
    /// entries the window mostly sat at its smallest between changes and reached the size that pays only
    /// after much of the burst (1.6 points below S3-FIFO; with step 12 instead of 8 on every hit, 3.6, as the
    /// window then overshot). Kesten's rule for stochastic approximation ("Accelerated Stochastic
    /// Approximation", Annals of Mathematical Statistics 29(1), 1958) keeps a step while successive
    /// signals agree and shrinks it when their sign changes; here the step grows while they agree and
    /// returns to its base on a change. Measured on the trace suite (`Docs/MemoryCache.md`): a quarter per
    /// hit up to 3 times met every one-shard target and left no row 0.3 points worse; up to 5 times met the
    /// same targets with a smaller sum of gaps, and half per hit cost a trace that changes class 0.9 points
    /// at four shards of a 3,000-entry cache.
    static func ghostStepMultiple(forRun run: Int, inShard: Bool = false) -> Double {
        let growth = inShard ? shardGhostRunGrowth : ghostRunGrowth
        return min(1 + Double(max(run.magnitude, 1) - 1) * growth, largestGhostStepMultiple(inShard: inShard))
    }

    /// What each further ghost hit in a run adds to the step's multiple: a quarter.
    static var ghostRunGrowth: Double { 0.25 }

    /// The largest multiple of the step a run of ghost hits reaches: 3 (24 entries' worth in a table of 200
    /// entries or more).
    static var largestGhostStepMultiple: Double { 3 }

    /// The fewest entries a ghost hit's step is a share of (fewer with a smaller count limit): 100, so that
    /// one hit moves the window by a few percent, not half, of a cache that holds only a few entries.
    static var fewestEntriesPerShare: Int { 100 }

    /// ``largestGhostStepMultiple``, or ``shardLargestGhostStepMultiple`` in a shard.
    static func largestGhostStepMultiple(inShard: Bool) -> Double {
        inShard ? shardLargestGhostStepMultiple : largestGhostStepMultiple
    }

    /// The longest run counted: the run at which the multiple reaches its largest.
    static func longestGhostRun(inShard: Bool) -> Int {
        let perHit = inShard ? shardGhostRunGrowth : ghostRunGrowth
        return Int(((largestGhostStepMultiple(inShard: inShard) - 1) / perHit).rounded()) + 1
    }

    /// Moves the window's share by ``ghostStep(forEntries:inShard:)`` entries' worth, times
    /// ``ghostStepMultiple(forRun:inShard:)``, towards the region whose ghosts hold `hash`, the hash of a key
    /// being inserted into a table of `entries` entries.
    ///
    /// - Returns: Whether the regions' budgets changed.
    @usableFromInline
    mutating func adapt(toInsertionOf hash: UInt32, entries: Int) -> Bool {
        let grewForLRU = sampled.requests >= lruCheckPeriod && checkAgainstLRU()
        // The step is computed only on a ghost hit: most insertions hit no ghost and pay nothing for it.
        let direction: Double
        if windowGhosts.contains(hash) {
            ghostRun = ghostRun > 0 ? min(ghostRun + 1, Self.longestGhostRun(inShard: isShard)) : 1
            direction = 1
        } else if mainGhosts.contains(hash) {
            ghostRun = ghostRun < 0 ? max(ghostRun - 1, -Self.longestGhostRun(inShard: isShard)) : -1
            direction = -1
        } else {
            return grewForLRU
        }
        let step =
            Self.ghostStep(forEntries: entries, inShard: isShard)
            * Self.ghostStepMultiple(forRun: ghostRun, inShard: isShard)
        // A share of the entries held, but of no fewer than ``fewestEntriesPerShare`` (or the count limit):
        // under a cost limit a few large entries fill a cache, and one ghost hit then moved the share by half
        // of it; two could leave the window the whole cache for good, since nothing then reaches the main
        // region to be evicted and shrink it again. A full cache of that many entries or more is unchanged.
        let held = max(entries, min(countLimit, Self.fewestEntriesPerShare), 1)
        let share = min(max(windowShare + direction * step / Double(held), windowFloor), 1)
        guard share != windowShare else { return grewForLRU }
        windowShare = share
        resizeRegions()
        return true
    }

    /// Resizes the sketch for `capacity` entries, and the ghosts with it (everything counted so far is
    /// forgotten); under a cost limit alone also the miniature LRU, whose sampled keys then change: the
    /// caller counts the sampled entries held again (`ShardTable.recountSampledHeld()`).
    @usableFromInline
    mutating func resize(toCapacity capacity: Int) {
        sketch.resize(toCapacity: capacity)
        if countLimit >= unlimitedCount {
            miniature.deallocate()
            miniature = MiniatureLRU(entries: sketch.capacity)
            sampled = (0, 0, 0)
            // Other keys are sampled now; the table counts them again (`recountSampledHeld`).
            sampledHeld = (0, 0)
        }
        windowGhosts.deallocate()
        mainGhosts.deallocate()
        windowGhosts = GhostFilter(generationSize: Self.ghostGeneration(forSketchCapacity: sketch.capacity))
        mainGhosts = GhostFilter(generationSize: Self.ghostGeneration(forSketchCapacity: sketch.capacity))
        sizeWindowGhosts()
    }
}

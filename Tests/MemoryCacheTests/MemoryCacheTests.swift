import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import MemoryCache

@Suite struct MemoryCacheTests {
    func makeCache(
        countLimit: Int? = nil,
        costLimit: Int? = nil,
        shardCount: Int = 1,
        clock: any CacheClock = ManualClock(),
        cost: @escaping @Sendable (Int) -> Int = { _ in 1 }
    ) throws -> MemoryCache<String, Int> {
        try MemoryCache(countLimit: countLimit, costLimit: costLimit, shardCount: shardCount, clock: clock, cost: cost)
    }

    // MARK: - Basics

    @Test func storesAndReturnsValues() throws {
        let cache = try makeCache()
        try cache.setValue(1, forKey: "a")
        cache["b"] = 2
        #expect(cache.value(forKey: "a") == 1)
        #expect(cache["b"] == 2)
        #expect(cache["c"] == nil)
        #expect(cache.count == 2)
        #expect(cache.checkInvariants())
    }

    @Test func replacingAKeyKeepsOneEntryWithTheNewValue() throws {
        let cache = try makeCache()
        try cache.setValue(1, forKey: "a")
        try cache.setValue(2, forKey: "a")
        #expect(cache.value(forKey: "a") == 2)
        #expect(cache.count == 1)
        #expect(cache.statistics.insertions == 2)
    }

    @Test func removeValueDropsOnlyThatKeyAndReturnsItsValue() throws {
        let cache = try makeCache()
        try cache.setValue(1, forKey: "a")
        try cache.setValue(2, forKey: "b")
        #expect(cache.removeValue(forKey: "a") == 1)
        #expect(cache.removeValue(forKey: "a") == nil)
        #expect(cache["a"] == nil)
        #expect(cache["b"] == 2)
        #expect(cache.count == 1)
        #expect(cache.checkInvariants())
    }

    @Test func settingNilThroughTheSubscriptRemoves() throws {
        let cache = try makeCache()
        cache["a"] = 1
        cache["a"] = nil
        #expect(cache["a"] == nil)
        #expect(cache.count == 0)
    }

    @Test func removeAllEmptiesTheCacheAndKeepsItUsable() throws {
        let cache = try makeCache(countLimit: 100)
        for index in 0..<50 { try cache.setValue(index, forKey: "k\(index)") }
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(cache.totalCost == 0)
        #expect(cache["k1"] == nil)
        try cache.setValue(7, forKey: "k1")
        #expect(cache["k1"] == 7)
        #expect(cache.statistics.insertions == 51)
        #expect(cache.checkInvariants())
    }

    @Test func entryCarriesItsExpiryAndCost() throws {
        let clock = ManualClock()
        let cache = try makeCache(clock: clock)
        try cache.setValue(5, forKey: "a", expiry: .seconds(30), cost: 12)
        let entry = cache.entry(forKey: "a")
        #expect(entry == CacheEntry(value: 5, expiresAt: clock.now.addingTimeInterval(30), cost: 12))
        try cache.setEntry(CacheEntry(value: 6, expiresAt: nil, cost: nil), forKey: "b")
        #expect(cache.entry(forKey: "b") == CacheEntry(value: 6, expiresAt: nil, cost: 1))
    }

    @Test func statisticsCountHitsMissesAndEvictions() throws {
        let cache = try makeCache(countLimit: 2)
        try cache.setValue(1, forKey: "a")
        try cache.setValue(2, forKey: "b")
        try cache.setValue(3, forKey: "c")
        _ = cache["a"]
        _ = cache["b"]
        _ = cache["c"]
        let stats = cache.statistics
        #expect(stats == CacheStatistics(hits: 2, misses: 1, insertions: 3, evictions: 1))
        #expect(cache.count == 2 && cache.totalCost == 2)
    }

    // MARK: - LRU order

    @Test func evictsTheLeastRecentlyUsedEntry() throws {
        // Given a full cache of three where `a` was read after `c` was written
        let cache = try makeCache(countLimit: 3)
        try cache.setValue(1, forKey: "a")
        try cache.setValue(2, forKey: "b")
        try cache.setValue(3, forKey: "c")
        #expect(cache["a"] == 1)
        // When a fourth key arrives
        try cache.setValue(4, forKey: "d")
        // Then `b`, the least recently used, is the one evicted
        #expect(cache["b"] == nil)
        #expect(cache["a"] == 1)
        #expect(cache["c"] == 3)
        #expect(cache["d"] == 4)
        #expect(cache.statistics.evictions == 1)
    }

    @Test func replacingAKeyRefreshesItsRecency() throws {
        let cache = try makeCache(countLimit: 2)
        try cache.setValue(1, forKey: "a")
        try cache.setValue(2, forKey: "b")
        try cache.setValue(10, forKey: "a")
        try cache.setValue(3, forKey: "c")
        #expect(cache["b"] == nil)
        #expect(cache["a"] == 10)
    }

    @Test(arguments: [
        (countLimit: 50, costLimit: Int.max), (countLimit: 200, costLimit: 600), (countLimit: 1, costLimit: 9),
    ])
    func matchesAReferenceLRUExactly(countLimit: Int, costLimit: Int) throws {
        // Given the real cache and a simple model with the same limits
        let cache = try MemoryCache<Int, Int>(
            countLimit: countLimit, costLimit: costLimit == Int.max ? nil : costLimit)
        var model = ReferenceLRU(countLimit: countLimit, costLimit: costLimit)
        var random = SplitMix64(seed: 42)
        // When both run the same skewed workload of reads and writes
        for step in 0..<20_000 {
            let key = Int(random.next(upperBound: 10 as UInt64)) * Int(random.next(upperBound: 40 as UInt64))
            if random.next(upperBound: 10 as UInt64) < 7 {
                #expect(cache.value(forKey: key) == model.value(forKey: key), "step \(step)")
            } else {
                let cost = Int(random.next(upperBound: 12 as UInt64))
                // The model drops an entry over the cost limit; the cache refuses it with entryTooLarge.
                let refused = (try? cache.setValue(step, forKey: key, cost: cost)) == nil
                #expect(refused == (cost > costLimit), "step \(step)")
                model.setValue(step, forKey: key, cost: cost)
            }
        }
        // Then hits, misses, evictions and contents agree exactly
        let stats = cache.statistics
        #expect(stats.hits == model.hits)
        #expect(stats.misses == model.misses)
        #expect(stats.evictions == model.evictions)
        #expect(cache.count == model.order.count)
        #expect(cache.totalCost == model.totalCost)
        for entry in model.order { #expect(cache.entry(forKey: entry.key)?.value == entry.value) }
        #expect(cache.checkInvariants())
    }

    // MARK: - Cost

    @Test func costLimitKeepsExactlyTheMostRecentEntriesThatFit() throws {
        let cache = try makeCache(costLimit: 1_000)
        for index in 0..<100 { try cache.setValue(index, forKey: "k\(index)", cost: 100) }
        #expect(cache.count == 10)
        #expect(cache.totalCost == 1_000)
        for index in 0..<90 { #expect(cache["k\(index)"] == nil) }
        for index in 90..<100 { #expect(cache["k\(index)"] == index) }
        #expect(cache.statistics.evictions == 90)
    }

    @Test func replacingAKeyReplacesItsCost() throws {
        let cache = try makeCache(costLimit: 1_000)
        try cache.setValue(1, forKey: "a", cost: 30)
        try cache.setValue(2, forKey: "b", cost: 5)
        try cache.setValue(3, forKey: "a", cost: 70)
        #expect(cache.totalCost == 75)
        try cache.setValue(4, forKey: "a", cost: 10)
        #expect(cache.totalCost == 15)
        cache.removeValue(forKey: "a")
        #expect(cache.totalCost == 5)
        #expect(cache.checkInvariants())
    }

    @Test func costFunctionIsUsedWhenNoCostIsGiven() throws {
        let cache = try makeCache(costLimit: 100, cost: { $0 })
        try cache.setValue(40, forKey: "a")
        try cache.setValue(50, forKey: "b")
        try cache.setValue(30, forKey: "c")
        #expect(cache["a"] == nil)
        #expect(cache.totalCost == 80)
    }

    @Test func negativeCostCountsAsZero() throws {
        let cache = try makeCache(costLimit: 10, cost: { _ in -5 })
        try cache.setValue(1, forKey: "a")
        try cache.setValue(2, forKey: "b", cost: -100)
        #expect(cache.totalCost == 0)
        #expect(cache.count == 2)
    }

    @Test func costsNearIntMaxNeverOverflowTheTotal() throws {
        // Given no cost limit and a cost function that returns Int.max
        let cache = try makeCache(cost: { _ in Int.max })
        // When a second such entry arrives, the first is evicted instead of overflowing the total
        try cache.setValue(1, forKey: "a")
        try cache.setValue(2, forKey: "b")
        #expect(cache["a"] == nil)
        #expect(cache["b"] == 2)
        #expect(cache.totalCost == Int.max)
        #expect(cache.statistics.evictions == 1)
        #expect(cache.checkInvariants())
        // And totals summed over shards saturate rather than trap
        let sharded = try makeCache(shardCount: 8, cost: { _ in Int.max / 2 })
        for index in 0..<64 { try sharded.setValue(index, forKey: "k\(index)") }
        #expect(sharded.totalCost == Int.max)
        #expect(sharded.checkInvariants())
    }

    @Test(arguments: [EvictionPolicy.leastRecentlyUsed, .windowTinyLFU])
    func replacingAnEntryOfCostNearIntMaxEvictsNothing(policy: EvictionPolicy) throws {
        // Given no cost limit, an entry b of cost 5 and an entry a of cost Int.max - 10
        let cache = try MemoryCache<String, Int>(policy: policy)
        try cache.setValue(1, forKey: "b", cost: 5)
        try cache.setValue(2, forKey: "a", cost: Int.max - 10)
        // When a is replaced by an entry of cost 20 (the total would overflow only with the old a still in it)
        try cache.setValue(3, forKey: "a", cost: 20)
        // Then nothing is evicted: the replaced entry's cost was freed first
        #expect(cache["b"] == 1)
        #expect(cache["a"] == 3)
        #expect(cache.totalCost == 25)
        #expect(cache.statistics.evictions == 0)
        #expect(cache.checkInvariants())
    }

    @Test func oversizeEntryIsNotStoredAndEvictsNothing() throws {
        // Given a cache holding a and b, and an older value for c
        let cache = try makeCache(costLimit: 100)
        try cache.setValue(1, forKey: "a", cost: 40)
        try cache.setValue(2, forKey: "b", cost: 40)
        try cache.setValue(3, forKey: "c", cost: 10)
        // When c is replaced by an entry whose cost alone exceeds the limit
        // Then the write throws entryTooLarge
        #expect(throws: CacheError.self) { try cache.setValue(4, forKey: "c", cost: 101) }
        do {
            try cache.setValue(4, forKey: "c", cost: 101)
        } catch let error as CacheError {
            #expect(error.code == .entryTooLarge)
        }
        // And it is not stored, the old c is gone, and nothing else was evicted
        #expect(cache["c"] == nil)
        #expect(cache["a"] == 1)
        #expect(cache["b"] == 2)
        #expect(cache.totalCost == 80)
        #expect(cache.statistics.evictions == 0)
        #expect(cache.statistics.insertions == 3)
    }

    // MARK: - Limits

    @Test func countLimitOfZeroKeepsNothing() throws {
        let cache = try makeCache(countLimit: 0)
        try cache.setValue(1, forKey: "a")
        #expect(cache["a"] == nil)
        #expect(cache.count == 0)
        #expect(cache.statistics.insertions == 0)
    }

    @Test func costLimitOfZeroKeepsNothingEvenZeroCostEntries() throws {
        let cache = try makeCache(costLimit: 0)
        try cache.setValue(1, forKey: "a", cost: 0)
        #expect(cache["a"] == nil)
        #expect(cache.count == 0)
    }

    @Test func nilLimitsKeepEverything() throws {
        let cache = try makeCache(cost: { _ in 1_000_000 })
        for index in 0..<5_000 { try cache.setValue(index, forKey: "k\(index)") }
        #expect(cache.count == 5_000)
        #expect(cache.totalCost == 5_000_000_000)
        #expect(cache.statistics.evictions == 0)
    }

    @Test(arguments: [(countLimit: -1, costLimit: nil as Int?, shardCount: 1), (nil, -5, 1), (nil, nil, 0)])
    func rejectsNegativeLimitsAndShardCountBelowOne(countLimit: Int?, costLimit: Int?, shardCount: Int) {
        #expect {
            try MemoryCache<String, Int>(countLimit: countLimit, costLimit: costLimit, shardCount: shardCount)
        } throws: { error in
            guard let error = error as? CacheError, error.code == .invalidArgument else { return false }
            return error.message.contains(
                countLimit != nil ? "countLimit" : costLimit != nil ? "costLimit" : "shardCount")
        }
    }

    @Test func shardedCacheStaysWithinItsLimits() throws {
        let cache = try makeCache(countLimit: 100, costLimit: 250, shardCount: 4, cost: { $0 % 5 })
        #expect(cache.shardCount == 4)
        for index in 0..<10_000 { try cache.setValue(index, forKey: "k\(index)") }
        #expect(cache.count <= 100)
        #expect(cache.totalCost <= 250)
        #expect(cache.count > 50)
        #expect(cache.checkInvariants())
    }

    @Test func shardCountNeverExceedsANonZeroLimit() throws {
        let cache = try makeCache(countLimit: 3, shardCount: 8)
        #expect(cache.shardCount == 3)
        for index in 0..<10 { try cache.setValue(index, forKey: "k\(index)") }
        #expect(cache.count <= 3)
    }

    @Test(arguments: [(limit: 10, shards: 4), (limit: 7, shards: 7), (limit: 1_000, shards: 16)])
    func shardSharesAddUpToTheLimitAndDifferByAtMostOne(limit: Int, shards: Int) {
        let shares = (0..<shards).compactMap { MemoryCache<String, Int>.share(of: limit, forShard: $0, of: shards) }
        #expect(shares.reduce(0, +) == limit)
        #expect(shares.max()! - shares.min()! <= 1)
        #expect(MemoryCache<String, Int>.share(of: nil, forShard: 0, of: shards) == nil)
    }

    // MARK: - Trimming

    @Test func emptyingTheCacheGivesItsStorageBack() throws {
        let cache = try makeCache()
        for index in 0..<10_000 { try cache.setValue(index, forKey: "k\(index)") }
        #expect(cache.shards[0].withLock { $0.capacity } >= 10_000)
        cache.trim(toCount: 0)
        #expect(cache.shards[0].withLock { $0.capacity } == 8)
        try cache.setValue(1, forKey: "again")
        #expect(cache["again"] == 1)
        #expect(cache.checkInvariants())
    }

    @Test func trimToCountKeepsTheMostRecentEntries() throws {
        let cache = try makeCache()
        for index in 0..<10 { try cache.setValue(index, forKey: "k\(index)") }
        _ = cache["k0"]
        cache.trim(toCount: 3)
        #expect(cache.count == 3)
        #expect(cache["k0"] == 0)
        #expect(cache["k9"] == 9)
        #expect(cache["k8"] == 8)
        #expect(cache.statistics.evictions == 7)
        cache.trim(toCount: -1)
        #expect(cache.count == 0)
        #expect(cache.checkInvariants())
    }

    @Test func trimToCostEvictsUntilTheTotalFits() throws {
        let cache = try makeCache()
        for index in 0..<10 { try cache.setValue(index, forKey: "k\(index)", cost: 10) }
        cache.trim(toCost: 35)
        #expect(cache.totalCost == 30)
        #expect(cache["k7"] == 7)
        #expect(cache["k6"] == nil)
    }
}

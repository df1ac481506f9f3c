import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import MemoryCache

/// Adversarial probes of second-chance eviction in the shards of a sharded cache, and of the exact LRU
/// order that a one-shard cache must keep unchanged.
@Suite struct ShardedEvictionProbeTests {
    /// A shard's table (approximate recency) of `Int` keys and values.
    typealias Table = ShardTable<Int, Int>

    // MARK: - The entry just written

    @Test func insertionIntoAShardWhoseEntriesWereAllReadKeepsTheNewEntry() {
        // Given a shard holding 1 and 2 at its count limit, both read since they were queued
        let table = Table(countLimit: 2, costLimit: nil, approximatesRecency: true)
        store(1, in: table)
        store(2, in: table)
        #expect(read(1, in: table) == 1 && read(2, in: table) == 2)

        // When 3 is inserted
        store(3, in: table)

        // Then 3 is held (an insertion never evicts its own entry) and 1, the oldest, made room
        #expect(holds(3, in: table))
        #expect(!holds(1, in: table) && holds(2, in: table))
        #expect(table.invariantViolation() == nil)
    }

    @Test func aWindowTinyLFUShardKeepsTheEntryItJustStored() throws {
        // Given a two-shard cache of one entry a shard, and the first shard's entry read once (referenced)
        let cache = try MemoryCache<Int, Int>(countLimit: 2, shardCount: 2, policy: .windowTinyLFU)
        let keys = Array((0..<10_000).filter { cache.shardIndex(of: $0) == 0 }.prefix(2))
        try cache.setValue(1, forKey: keys[0])
        #expect(cache[keys[0]] == 1)

        // When another key of the same shard is stored
        try cache.setValue(2, forKey: keys[1])

        // Then it is held (with a count limit only, a new entry survives its own insertion): the window's
        // second chance queued the read entry behind it, and it went to the back once more
        #expect(cache[keys[1]] == 2)
        #expect(cache[keys[0]] == nil)
        #expect(cache.checkInvariants())
    }

    @Test func aWindowTinyLFUShardWhoseWindowWasAllReadKeepsTheNewEntry() {
        // Given a full shard of 1,000 whose window (its 10 newest entries) was all read since it was queued
        let table = Table(countLimit: 1_000, costLimit: nil, approximatesRecency: true, policy: .windowTinyLFU)
        for key in 0..<1_000 { store(key, in: table) }
        let window = table.frequencyPolicy.window
        let windowKeys = window.records[window.start...].map { table.keys[Int($0.slot)] }
        #expect(windowKeys == Array(990..<1_000))
        for key in windowKeys { #expect(read(key, in: table) == key) }
        table.settleBufferedHits()

        // When a new key is stored
        store(5_000, in: table)

        // Then it is held, and the window's oldest entry became the candidate in its place
        #expect(holds(5_000, in: table))
        #expect(table.count == 1_000)
        #expect(table.invariantViolation() == nil)
    }

    @Test func costlyInsertionIntoAShardOfReadEntriesKeepsTheNewEntry() {
        // Given a shard at cost 9 of 10, every entry read since it was queued
        let table = Table(countLimit: nil, costLimit: 10, approximatesRecency: true)
        store(1, cost: 5, in: table)
        store(2, cost: 4, in: table)
        #expect(read(1, in: table) == 1 && read(2, in: table) == 2)

        // When an entry of cost 5 is inserted
        store(3, cost: 5, in: table)

        // Then it is held and the total is within the limit
        #expect(holds(3, in: table))
        #expect(!holds(1, in: table) && holds(2, in: table))
        #expect(table.totalCost == 9)
        #expect(table.invariantViolation() == nil)
    }

    @Test func insertionThatEvictsManyReadEntriesKeepsTheNewEntryAndEvictsOnlyWhatItMust() {
        // Given a shard of 100 entries of cost 1, all read, after enough replacements to leave stale
        // records (so the second chances re-queue into a queue that compacts while evicting)
        let table = Table(countLimit: nil, costLimit: 100, approximatesRecency: true)
        for round in 0..<3 {
            for key in 0..<100 { _ = table.store(key + round, forKey: key, cost: 1, expiresAt: .infinity, now: 0) }
        }
        for key in 0..<100 { #expect(table.index[key] != nil && read(key, in: table) != nil) }

        // When an entry of cost 60 is inserted
        store(1_000, cost: 60, in: table)

        // Then it is held, exactly 60 entries made room, and the table is consistent
        #expect(holds(1_000, in: table))
        #expect(table.count == 41)
        #expect(table.totalCost == 100)
        #expect(table.counters.evictions == 60)
        #expect(table.invariantViolation() == nil)
    }

    @Test(arguments: [EvictionPolicy.leastRecentlyUsed, .windowTinyLFU], 11..<15)
    func shardedCacheReturnsEveryValueRightAfterStoringIt(policy: EvictionPolicy, seed: UInt64) throws {
        // Given a sharded cache at its count limit whose entries are read between insertions (four seeds:
        // which keys share a shard also changes with the process's hash seed)
        let cache = try MemoryCache<Int, Int>(countLimit: 64, shardCount: 8, policy: policy, clock: ManualClock())
        var random = SplitMix64(seed: seed)
        for step in 0..<20_000 {
            let key = Int(random.next(upperBound: 200 as UInt64))
            if random.next(upperBound: 3 as UInt64) == 0 {
                // When a value is stored
                try cache.setValue(step, forKey: key)
                // Then it is returned at once: its own insertion did not evict it
                #expect(cache.value(forKey: key) == step, "key \(key) lost at step \(step)")
            } else if let value = cache.value(forKey: key) {
                #expect(value <= step)
            }
        }
        #expect(cache.count <= 64)
        #expect(cache.checkInvariants())
    }

    @Test func shardOfOptionalValuesEvictsNilValuesLikeAnyOther() {
        // Given a shard of optional values at its limit, holding nil values that were all read
        let table = ShardTable<Int, Int?>(countLimit: 2, costLimit: nil, approximatesRecency: true)
        for key in 0..<2 { _ = table.store(nil, forKey: key, cost: 1, expiresAt: .infinity, now: 0) }
        for key in 0..<2 {
            var value: Int??
            var expiresAt = 0.0
            var cost = 0
            var tagStamp: TagStamp?
            #expect(
                table.readWithoutClock(
                    key, wantsCost: false, value: &value, expiresAt: &expiresAt, cost: &cost, tagStamp: &tagStamp)
                    == .hit
            )
        }
        // When a third is stored
        let released = table.store(nil, forKey: 2, cost: 1, expiresAt: .infinity, now: 0)
        // Then one nil value was evicted and handed back, and the new entry is held
        #expect(released.first == .some(nil) && released.rest.isEmpty)
        #expect(table.index[2] != nil && table.index[0] == nil && table.count == 2)
        #expect(table.invariantViolation() == nil)
    }

    // MARK: - Second chance, not exact recency

    @Test func readEntriesGetTheirSecondChanceInQueueOrderNotInTheOrderTheyWereRead() {
        // Given a shard holding 1, 2 and 3 at its count limit, where 2 and then 1 were read
        let table = Table(countLimit: 3, costLimit: nil, approximatesRecency: true)
        for key in 1...3 { store(key, in: table) }
        #expect(read(2, in: table) == 2 && read(1, in: table) == 1)

        // When 4 is inserted, then 5
        store(4, in: table)
        let afterFour = (holds(1, in: table), holds(2, in: table), holds(3, in: table))
        store(5, in: table)

        // Then 4 evicted 3, the one entry not read. The read entries got their second chance only when
        // that eviction reached them, so they were queued again behind 4 (which was queued first), and 5
        // evicted 4. Hits that moved their entries to the back as they happened, as an exact LRU's do,
        // would have left the order 3, 2, 1, 4, and 5 would have evicted 2.
        #expect(afterFour == (true, true, false))
        #expect(holds(1, in: table) && holds(2, in: table) && !holds(4, in: table) && holds(5, in: table))
        #expect(table.invariantViolation() == nil)
    }

    // MARK: - Limits and bad input

    @Test func hugeCostsInAShardNeverOverflowTheTotal() {
        // Given a shard without a cost limit holding two entries whose costs sum near Int.max, both read
        let table = Table(countLimit: nil, costLimit: nil, approximatesRecency: true)
        store(1, cost: Int.max / 2, in: table)
        store(2, cost: Int.max / 2, in: table)
        #expect(read(1, in: table) == 1 && read(2, in: table) == 2)

        // When an entry of cost Int.max arrives
        store(3, cost: Int.max, in: table)

        // Then it is held alone and the total is exact
        #expect(holds(3, in: table) && table.count == 1)
        #expect(table.totalCost == Int.max)
        #expect(table.invariantViolation() == nil)
    }

    @Test func shardedCacheStaysWithinEveryShareUnderRandomWork() throws {
        // Given a sharded cache with both limits, on a manual clock
        let clock = ManualClock()
        let cache = try MemoryCache<Int, Int>(
            countLimit: 50, costLimit: 200, shardCount: 4, clock: clock, cost: { $0 % 11 })
        var random = SplitMix64(seed: 99)
        var latest: [Int: (value: Int, expiresAt: Date?)] = [:]
        for step in 0..<20_000 {
            let key = Int(random.next(upperBound: 120 as UInt64))
            switch random.next(upperBound: 20 as UInt64) {
            case 0...6:
                let expiry: Expiry = random.next(upperBound: 2 as UInt64) == 0 ? .never : .after(.seconds(5))
                try cache.setValue(step, forKey: key, expiry: expiry)
                latest[key] = (step, expiry == .never ? nil : clock.now.addingTimeInterval(5))
            case 7:
                cache.removeValue(forKey: key)
                latest[key] = nil
            case 8:
                clock.advance(by: .seconds(1))
            case 9:
                if random.next(upperBound: 20 as UInt64) == 0 { cache.trim(toCount: 20) }
            case 10:
                if random.next(upperBound: 20 as UInt64) == 0 { cache.trim(toCost: 60) }
            case 11:
                if random.next(upperBound: 50 as UInt64) == 0 { cache.removeExpired() }
            case 12:
                if random.next(upperBound: 500 as UInt64) == 0 {
                    cache.removeAll()
                    latest = [:]
                }
            default:
                // Then a read returns the latest value for the key, only while it is live
                if let value = cache.value(forKey: key) {
                    let expected = latest[key]
                    #expect(value == expected?.value, "step \(step): wrong value for \(key)")
                    if let expiresAt = expected?.expiresAt { #expect(clock.now < expiresAt, "expired \(key)") }
                }
            }
            if step % 97 == 0, let problem = cache.invariantViolation() {
                Issue.record("step \(step): \(problem)")
                return
            }
        }
        #expect(cache.count <= 50 && cache.totalCost <= 200)
        #expect(cache.checkInvariants())
    }

    // MARK: - Exact LRU is unchanged

    @Test func oneShardCacheMatchesTheReferenceLRUWithCostsRemovalsAndTrims() throws {
        // Given a one-shard cache and the reference model with the same limits
        let cache = try MemoryCache<Int, Int>(countLimit: 30, costLimit: 90, clock: ManualClock())
        var model = ReferenceLRU(countLimit: 30, costLimit: 90)
        var random = SplitMix64(seed: 2_024)
        for step in 0..<20_000 {
            let key = Int(random.next(upperBound: 60 as UInt64))
            switch random.next(upperBound: 10 as UInt64) {
            case 0...3:
                let cost = Int(random.next(upperBound: 8 as UInt64))
                try cache.setValue(step, forKey: key, cost: cost)
                model.setValue(step, forKey: key, cost: cost)
            case 4:
                cache.removeValue(forKey: key)
                model.removeValue(forKey: key)
            case 5:
                if random.next(upperBound: 10 as UInt64) == 0 {
                    let keep = Int(random.next(upperBound: 30 as UInt64))
                    cache.trim(toCount: keep)
                    model.trim(toCount: keep)
                }
            default:
                // Then every read agrees with the model, hit for hit
                #expect(cache.value(forKey: key) == model.value(forKey: key), "step \(step), key \(key)")
            }
        }
        // And the entries, their order-dependent survivors and the counters agree
        let held = cache.shards[0].withLock { table in Set(table.index.keys) }
        #expect(held == Set(model.order.map(\.key)))
        #expect(cache.totalCost == model.totalCost)
        #expect(cache.statistics.hits == model.hits && cache.statistics.misses == model.misses)
        #expect(cache.statistics.evictions == model.evictions)
        #expect(cache.checkInvariants())
    }
}

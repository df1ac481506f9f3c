import StrataTestSupport
import Testing

@testable import MemoryCache

/// The recency queue: records of uses, stale ones dropped by compaction, eviction of the oldest
/// current record.
extension MemoryCacheTests {
    @Test func repeatedHitsOnOneKeyKeepTheQueueBoundedAndTheOrderExact() throws {
        // Given three entries, "a" the least recently used
        let cache = try makeCache(countLimit: 3)
        for key in ["a", "b", "c"] { try cache.setValue(0, forKey: key) }
        // When "a" is read many times (each read appends a record)
        for _ in 0..<10_000 { #expect(cache["a"] == 0) }
        // Then compaction has kept the queue within twice the entries plus its slack
        let queued = cache.shards[0].withLock { $0.queue.count }
        #expect(queued <= 2 * 3 + 16 + 1)
        #expect(cache.checkInvariants())
        // And the next insertion evicts "b", the least recently used, not "a"
        try cache.setValue(0, forKey: "d")
        #expect(cache["b"] == nil)
        #expect(cache["a"] == 0 && cache["c"] == 0 && cache["d"] == 0)
    }

    @Test(arguments: [EvictionPolicy.leastRecentlyUsed, .windowTinyLFU], [1, 4])
    func writesAtTheLimitKeepTheQueuesBounded(policy: EvictionPolicy, shardCount: Int) throws {
        // Given a full cache of 40 entries
        let cache = try MemoryCache<Int, Int>(countLimit: 40, shardCount: shardCount, policy: policy)

        // When 100,000 new keys are written, each evicting one (whose records the eviction spends)
        for key in 0..<100_000 { try cache.setValue(key, forKey: key) }

        // Then each shard keeps about twice its entries in records, spent ones included (found by an
        // adversarial run: compaction counted only unspent records, so spent ones piled up at the limit, 8
        // bytes a write, until the tick's restart)
        for shard in cache.shards {
            let (entries, records) = shard.withLock { table in
                let regions = table.frequencyPolicy
                return (
                    table.count,
                    table.queue.count + regions.window.records.count + regions.probation.records.count
                        + regions.protected.records.count
                )
            }
            #expect(entries == 40 / shardCount)
            #expect(records <= 2 * entries + 3 * 17, "\(records) records kept for \(entries) entries")
        }
        #expect(cache.checkInvariants())
    }

    @Test func trimAfterManyCompactionsKeepsExactlyTheMostRecentlyUsed() throws {
        // Given 100 entries read in a random order, long enough for many compactions
        let cache = try MemoryCache<Int, Int>()
        var model = ReferenceLRU(countLimit: 100, costLimit: Int.max)
        for key in 0..<100 {
            try cache.setValue(key, forKey: key, cost: 1)
            model.setValue(key, forKey: key, cost: 1)
        }
        var random = SplitMix64(seed: 7)
        for _ in 0..<50_000 {
            let key = Int(random.next(upperBound: 100 as UInt64))
            #expect(cache.value(forKey: key) == model.value(forKey: key))
        }
        // When the cache is trimmed to its ten most recent entries
        cache.trim(toCount: 10)
        // Then exactly the model's ten most recently used keys remain
        let expected = Set(model.order.suffix(10).map(\.key))
        #expect(Set((0..<100).filter { cache.entry(forKey: $0) != nil }) == expected)
        #expect(cache.checkInvariants())
    }

    @Test func shardedCacheKeepsAHotKeyWhileColdKeysChurn() throws {
        // Given a sharded cache, whose hits may skip recording a use of a recent entry
        let cache = try makeCache(countLimit: 64, shardCount: 4)
        try cache.setValue(-1, forKey: "hot")
        // When cold keys stream through while the hot key is read between insertions
        for index in 0..<10_000 {
            try cache.setValue(index, forKey: "cold\(index)")
            #expect(cache["hot"] == -1, "evicted after \(index) insertions")
        }
        // Then the hot key was never evicted and the shards are consistent and within their limits
        #expect(cache.count <= 64)
        #expect(cache.checkInvariants())
    }

    @Test func shardTablesGiveAReadEntryASecondChanceWithoutQueueingTheRead() {
        // Given a shard's table (approximate recency) holding a, b, c, "a" the oldest
        let table = ShardTable<String, Int>(countLimit: 3, costLimit: nil, approximatesRecency: true)
        func store(_ key: String) { _ = table.store(0, forKey: key, cost: 1, expiresAt: .infinity, now: 0) }
        func holds(_ key: String) -> Bool { table.index[key] != nil }
        for key in ["a", "b", "c"] { store(key) }
        // When "a" is read many times
        for _ in 0..<1_000 {
            var value: Int?
            var expiresAt = 0.0
            var cost = 0
            var tagStamp: TagStamp?
            let status = table.readWithoutClock(
                "a", wantsCost: false, value: &value, expiresAt: &expiresAt, cost: &cost, tagStamp: &tagStamp)
            #expect(status == .hit && value == 0)
        }
        // Then the reads queued nothing (a hit only marks the entry), so two cores reading one shard
        // never write its queue
        #expect(table.queue.count - table.queueStart == 3)
        // And the next insertion evicts "b": "a" is spared once and moves behind "d"
        store("d")
        #expect(!holds("b") && holds("a") && holds("c") && holds("d"))
        store("e")
        #expect(!holds("c") && holds("a"))
        store("f")
        #expect(!holds("d") && holds("a"))
        // And having spent its second chance unread, "a" is evicted next
        store("g")
        #expect(!holds("a") && holds("e") && holds("f") && holds("g"))
        #expect(table.invariantViolation() == nil)
    }
}

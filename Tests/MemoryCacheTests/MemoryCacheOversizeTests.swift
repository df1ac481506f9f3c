import CacheCore
import MemoryCache
import Testing

/// The one oversized-entry rule, as the memory tier keeps it: refused with `entryTooLarge`, the earlier
/// value removed, nothing else evicted; a limit of 0 keeps nothing without an error.
@Suite struct MemoryCacheOversizeTests {
    @Test func anEntryOverTheCostLimitThrowsAndRemovesTheEarlierValue() throws {
        // Given a cache with a cost limit of 10 holding an older value for the key
        let cache = try MemoryCache<String, Int>(costLimit: 10)
        try cache.setValue(1, forKey: "k", cost: 5)

        // When a value whose cost alone exceeds the limit is written through each write method
        let writes: [() throws -> Void] = [
            { try cache.setValue(2, forKey: "k", cost: 11) },
            { try cache.setEntry(CacheEntry(value: 3, cost: 11), forKey: "k") },
        ]
        for write in writes {
            try cache.setValue(1, forKey: "k", cost: 5)
            let error = try #require(throws: CacheError.self) { try write() }

            // Then it is refused with entryTooLarge, and no reader sees the earlier value
            #expect(error.code == .entryTooLarge)
            #expect(cache.value(forKey: "k") == nil)
        }
        #expect(cache.statistics.evictions == 0)
    }

    @Test func aShardedCacheNamesItsShareAndTheCachesLimit() throws {
        let cache = try MemoryCache<String, Int>(costLimit: 100, shardCount: 4)
        let error = try #require(throws: CacheError.self) { try cache.setValue(1, forKey: "k", cost: 30) }
        #expect(error.code == .entryTooLarge)
        #expect(error.message.contains("share (25) of the cache's cost limit of 100 over 4 shards"))
    }

    @Test func theSubscriptDropsAnOversizedValueWithoutReporting() throws {
        let cache = try MemoryCache<String, Int>(costLimit: 10, cost: { $0 })
        cache["k"] = 5
        cache["k"] = 11
        #expect(cache["k"] == nil)
    }

    @Test func aLimitOfZeroKeepsNothingWithoutAnError() throws {
        let cache = try MemoryCache<String, Int>(costLimit: 0)
        try cache.setValue(1, forKey: "k", cost: 1)
        #expect(cache.value(forKey: "k") == nil)
    }
}

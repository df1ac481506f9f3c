import CacheCore
import Testing

@testable import MemoryCache

extension MemoryCacheTests {
    @Test func memoryPressureWarningKeepsTheMostRecentlyUsedHalfOfEachShard() throws {
        // Given one shard of 5 entries, key 0 read last so that it is the most recently used
        let cache = try MemoryCache<Int, Int>(countLimit: nil, shardCount: 1)
        for key in 0..<5 { try cache.setValue(key * 10, forKey: key) }
        _ = cache.value(forKey: 0)

        // When the system reports a warning
        cache.respondToMemoryPressure(.warning)

        // Then 5 * 1/2 = 2 entries stay, the two most recently used, and 3 count as evictions
        #expect(cache.count == 2)
        #expect(cache.value(forKey: 0) == 0)
        #expect(cache.value(forKey: 4) == 40)
        #expect(cache.value(forKey: 1) == nil)
        #expect(cache.statistics.evictions == 3)
    }

    @Test func memoryPressureWarningTrimsEveryShard() throws {
        // Given 4 shards holding 400 entries between them
        let cache = try MemoryCache<Int, Int>(countLimit: nil, shardCount: 4)
        for key in 0..<400 { try cache.setValue(key, forKey: key) }
        let before = cache.count

        // When the system reports a warning
        cache.respondToMemoryPressure(.warning)

        // Then every shard kept half of its own entries (rounded down), so at most half stay in all
        #expect(before == 400)
        #expect(cache.count <= 200)
        #expect(cache.count >= 200 - 4)
    }

    @Test func criticalMemoryPressureEmptiesTheCache() throws {
        // Given a filled cache
        let cache = try MemoryCache<Int, Int>(countLimit: nil, shardCount: 2)
        for key in 0..<10 { try cache.setValue(key, forKey: key) }

        // When the system reports a critical event
        cache.respondToMemoryPressure(.critical)

        // Then nothing is left, and the cache still works
        #expect(cache.count == 0)
        try cache.setValue(1, forKey: 1)
        #expect(cache.value(forKey: 1) == 1)
    }
}

import CacheCore
import CacheTesting
import Foundation
import Testing

@testable import MemoryCache

/// The bulk read: one clock reading, one lock per shard, misses reported in order.
@Suite struct MemoryCacheBulkReadTests {
    @Test(arguments: [1, 4])
    func readsLiveKeysReportsMissesAndDropsExpiredEntries(shardCount: Int) throws {
        // Given two live entries, one that expires at 10 s and one absent key
        let clock = ManualClock()
        let cache = try MemoryCache<String, Int>(shardCount: shardCount, clock: clock)
        try cache.setValue(1, forKey: "a")
        try cache.setValue(2, forKey: "b", expiry: .seconds(60))
        try cache.setValue(3, forKey: "c", expiry: .seconds(10))
        clock.advance(by: 20)

        // When they are read in one call, one key twice
        let (values, missing) = cache.valuesAndMisses(forKeys: ["a", "c", "b", "x", "a"])

        // Then the live ones come back once each, the others are missing, the expired one is gone
        #expect(values == ["a": 1, "b": 2])
        #expect(missing.sorted() == ["c", "x"])
        #expect(cache.values(forKeys: ["b", "x"]) == ["b": 2])
        #expect(cache.count == 2)
        #expect(cache.entries(forKeys: ["a", "b", "a"]).mapValues(\.value) == ["a": 1, "b": 2])
    }
}

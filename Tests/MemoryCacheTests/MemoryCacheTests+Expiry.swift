import CacheCore
import CacheTesting
import Foundation
import Testing

@testable import MemoryCache

extension MemoryCacheTests {
    @Test func entryIsVisibleUntilJustBeforeItsExpiryAndGoneAtIt() throws {
        // Given an entry with a TTL of 10 s written at t = 0
        let clock = ManualClock()
        let cache = try makeCache(clock: clock)
        try cache.setValue(1, forKey: "a", expiry: .seconds(10))
        // Then it is a hit at t = 9.999 and a miss at t = 10
        clock.advance(by: 9.999)
        #expect(cache["a"] == 1)
        clock.advance(by: 0.001)
        #expect(cache["a"] == nil)
        let stats = cache.statistics
        #expect(stats.expirations == 1)
        #expect(stats.misses == 1)
        #expect(cache.count == 0)
    }

    @Test func readsNeverExtendExpiry() throws {
        let clock = ManualClock()
        let cache = try makeCache(clock: clock)
        try cache.setValue(1, forKey: "a", expiry: .seconds(10))
        for _ in 0..<9 {
            clock.advance(by: 1)
            #expect(cache["a"] == 1)
        }
        clock.advance(by: 1)
        #expect(cache["a"] == nil)
    }

    @Test func defaultExpiryAppliesToValuesStoredWithoutOne() throws {
        let clock = ManualClock()
        let cache = try MemoryCache<String, Int>(defaultExpiry: .seconds(5), clock: clock)
        try cache.setValue(1, forKey: "a")
        try cache.setValue(2, forKey: "b", expiry: .never)
        cache["c"] = 3
        clock.advance(by: 5)
        #expect(cache["a"] == nil)
        #expect(cache["b"] == 2)
        #expect(cache["c"] == nil)
    }

    @Test func clockMovingBackNeverRevivesARemovedEntry() throws {
        // Given an entry that expired and was dropped by a read
        let clock = ManualClock()
        let cache = try makeCache(clock: clock)
        try cache.setValue(1, forKey: "a", expiry: .seconds(10))
        try cache.setValue(2, forKey: "b", expiry: .seconds(10))
        clock.advance(by: 20)
        #expect(cache["a"] == nil)
        #expect(cache.removeExpired() == 1)
        // When the clock goes back before the expiry
        clock.advance(by: -15)
        // Then neither entry comes back and the cache keeps working
        #expect(cache["a"] == nil)
        #expect(cache["b"] == nil)
        try cache.setValue(3, forKey: "a", expiry: .seconds(1))
        #expect(cache["a"] == 3)
        #expect(cache.checkInvariants())
    }

    @Test func alreadyExpiredEntryIsNotStoredAndRemovesTheOldOne() throws {
        let clock = ManualClock()
        let cache = try makeCache(clock: clock)
        try cache.setValue(1, forKey: "a")
        try cache.setEntry(CacheEntry(value: 2, expiresAt: clock.now), forKey: "a")
        #expect(cache["a"] == nil)
        #expect(cache.count == 0)
        try cache.setValue(3, forKey: "b", expiry: .at(clock.now.addingTimeInterval(-1)))
        #expect(cache["b"] == nil)
        try cache.setEntry(CacheEntry(value: 4, expiresAt: Date(timeIntervalSinceReferenceDate: .nan)), forKey: "c")
        #expect(cache["c"] == nil)
        #expect(cache.count == 0)
        #expect(cache.statistics.insertions == 1)
    }

    @Test func removeExpiredDropsOnlyExpiredEntries() throws {
        let clock = ManualClock()
        let cache = try makeCache(clock: clock)
        // Key k<i> lives for i + 1 seconds.
        for index in 0..<10 { try cache.setValue(index, forKey: "k\(index)", expiry: .seconds(Double(index + 1))) }
        try cache.setValue(99, forKey: "forever")
        clock.advance(by: 5)
        #expect(cache.removeExpired() == 5)
        #expect(cache.count == 6)
        #expect(cache["k4"] == nil)
        #expect(cache["k5"] == 5)
        #expect(cache["forever"] == 99)
        #expect(cache.statistics.expirations == 5)
        #expect(cache.checkInvariants())
    }

    @Test func removeValueDoesNotReturnAnExpiredValue() throws {
        let clock = ManualClock()
        let cache = try makeCache(clock: clock)
        try cache.setValue(1, forKey: "a", expiry: .seconds(1))
        clock.advance(by: 1)
        #expect(cache.removeValue(forKey: "a") == nil)
        #expect(cache.count == 0)
    }

    @Test func worksThroughTheAsyncCacheProtocol() async throws {
        let clock = ManualClock()
        let cache: any Cache<String, Int> = try MemoryCache<String, Int>(clock: clock)
        try await cache.setValue(1, forKey: "a", expiry: .seconds(10))
        #expect(try await cache.value(forKey: "a") == 1)
        #expect(try await cache.entry(forKey: "a")?.expiresAt == clock.now.addingTimeInterval(10))
        try await cache.removeEntry(forKey: "a")
        #expect(try await cache.value(forKey: "a") == nil)
    }
}

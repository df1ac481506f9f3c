import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import MultiCache
import Testing

/// A write too large for one tier is a partial failure of the MultiCache that names the tier, and no
/// tier serves the key's earlier value afterwards.
@Suite struct MultiCacheOversizeTests {
    @Test func aTierThatRefusesAnOversizedEntryIsNamedAndHoldsNoOlderValue() async throws {
        // Given a small memory tier (10 bytes) over a larger one, both holding an older value
        let clock = ManualClock()
        let small = try MemoryCache<String, Data>(costLimit: 10, clock: clock) { $0.count }
        let large = try MemoryCache<String, Data>(clock: clock)
        let cache = try MultiCache<String, Data>(tiers: [.init(small, name: "small"), .init(large, name: "large")])
        try await cache.setValue(Data("old".utf8), forKey: "k")

        // When a 20-byte value is written
        let error = try await #require(throws: CacheError.self) {
            try await cache.setValue(Data(count: 20), forKey: "k")
        }

        // Then the MultiCache reports a partial failure naming the small tier, with entryTooLarge as cause
        #expect(error.code == .tierFailure)
        #expect(error.tierFailures.map(\.index) == [0])
        #expect(error.tierFailures.map(\.name) == ["small"])
        #expect((error.tierFailures.first?.error as? CacheError)?.code == .entryTooLarge)
        // And the small tier holds nothing for the key, the large one the new value
        #expect(small.value(forKey: "k") == nil)
        #expect(large.value(forKey: "k") == Data(count: 20))
        #expect(try await cache.value(forKey: "k") == Data(count: 20))
        #expect(cache.tierStatistics[0].errors == 1)
    }

    @Test func readsAndLoadFillsSkipATierThatRefusesBySizeWithoutAnErrorOrEvent() async throws {
        // Given a 10-byte memory tier over a larger one, with an observer
        let events = EventLog()
        // (both cost a value its byte count, so a copy carries cost 20 up to the small tier)
        let small = try MemoryCache<String, Data>(costLimit: 10) { $0.count }
        let large = try MemoryCache<String, Data>(cost: { $0.count })
        let cache = try MultiCache<String, Data>(
            tiers: [.init(small, name: "small"), .init(large, name: "large")], observer: events.observer)
        try large.setValue(Data(count: 20), forKey: "big")

        // When the big value is read six times and another one is loaded
        for _ in 0..<6 { #expect(try await cache.value(forKey: "big") == Data(count: 20)) }
        #expect(try await cache.value(forKey: "loaded", orLoad: { Data(count: 30) }) == Data(count: 30))

        // Then the small tier is skipped quietly: no error counted, no event, no write-back counted
        #expect(cache.tierStatistics[0].errors == 0)
        #expect(cache.tierStatistics[0].writeBacks == 0)
        #expect(cache.statistics.errors == 0)
        #expect(events.all.isEmpty)
        #expect(large.value(forKey: "loaded") == Data(count: 30))
    }
}

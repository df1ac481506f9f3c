import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import MemoryCache

/// Issue 17 on one `MemoryCache`, without a `MultiCache`: stale retention (plain reads never see it),
/// fail-safe with its throttle, stale-while-revalidate fenced by the tier's own removals, the tier's
/// lifetime ending its background work, and the batch load. Run under ThreadSanitizer.
@Suite(.timeLimit(.minutes(10)))
struct SingleTierLoadOptionsTests {
    private struct Down: Error {}

    private static let options = LoadOptions(
        failSafe: .init(maximumStaleness: .seconds(60), throttle: .seconds(5)), staleWhileRevalidate: .seconds(20))

    private func makeCache() throws -> (MemoryCache<String, Data>, ManualClock, CoordinatorEventLog) {
        let clock = ManualClock()
        let cache = try MemoryCache<String, Data>(clock: clock)
        let events = CoordinatorEventLog()
        cache.loadOnce.storage.observe(events.observer)
        return (cache, clock, events)
    }

    @Test func staleEntriesAreKeptForLoadsOnlyAndUntilTheirStaleInstant() async throws {
        let (cache, clock, _) = try makeCache()
        _ = try await cache.value(forKey: "k", expiry: .seconds(10), options: Self.options) { Data("v1".utf8) }
        clock.advance(by: 30)

        #expect(cache.value(forKey: "k") == nil)
        #expect(cache.entry(forKey: "k") == nil)
        #expect(cache.removeExpired() == 0)
        #expect(cache.count == 1)
        #expect(cache.entryIncludingStale(forKey: "k")?.value == Data("v1".utf8))
        clock.advance(by: 40)
        #expect(cache.entryIncludingStale(forKey: "k") == nil)
        #expect(cache.removeExpired() == 1)
        #expect(cache.count == 0)
    }

    @Test func failSafeOnOneTierServesTheStaleValueAndThrottlesTheLoader() async throws {
        let (cache, clock, _) = try makeCache()
        _ = try await cache.value(forKey: "k", expiry: .seconds(10), options: Self.options) { Data("v1".utf8) }
        clock.advance(by: 40)  // past the stale-while-revalidate grace, within the maximum staleness
        let runs = Locked(0)
        for _ in 0..<3 {
            let value = try await cache.value(forKey: "k", expiry: .seconds(10), options: Self.options) {
                runs.withLock { $0 += 1 }
                throw Down()
            }
            #expect(value == Data("v1".utf8))
        }
        #expect(runs.value == 1)
        #expect(cache.statistics.loads == 2)
        #expect(cache.value(forKey: "k") == nil)
    }

    @Test(arguments: ["removeValue", "removeEntry", "removeAll", "setValue"])
    func aRefreshFencedByTheTiersOwnWriteOrRemovalNeverLands(mutation: String) async throws {
        let (cache, clock, events) = try makeCache()
        _ = try await cache.value(forKey: "k", expiry: .seconds(10), options: Self.options) { Data("v1".utf8) }
        clock.advance(by: 12)
        let loader = HeldLoader()
        let value = try await cache.value(forKey: "k", expiry: .seconds(10), options: Self.options) {
            try await loader.hold()
            return Data("refreshed".utf8)
        }
        #expect(value == Data("v1".utf8))
        try await loader.waitUntilHeld()

        switch mutation {
        case "removeValue": cache.removeValue(forKey: "k")
        case "removeEntry": cache.removeEntry(forKey: "k")
        case "removeAll": cache.removeAll()
        default: try cache.setValue(Data("written".utf8), forKey: "k", expiry: .seconds(10))
        }
        loader.release()
        try await events.wait(for: .loadFinished, count: 2)

        #expect(cache.value(forKey: "k") == (mutation == "setValue" ? Data("written".utf8) : nil))
        #expect(cache.entryIncludingStale(forKey: "k")?.value != Data("refreshed".utf8))
    }

    @Test func aRefreshThatLandsStoresAFreshValue() async throws {
        let (cache, clock, events) = try makeCache()
        _ = try await cache.value(forKey: "k", expiry: .seconds(10), options: Self.options) { Data("v1".utf8) }
        clock.advance(by: 12)
        _ = try await cache.value(forKey: "k", expiry: .seconds(10), options: Self.options) { Data("v2".utf8) }
        try await events.wait(for: .loadFinished, count: 2)
        // (The plain read leaves `staleUntil` out, to keep the hit path lean; the stale-aware read has it.)
        let entry = try #require(cache.entryIncludingStale(forKey: "k"))
        #expect(cache.value(forKey: "k") == Data("v2".utf8))
        #expect(entry.value == Data("v2".utf8))
        #expect(entry.expiresAt == clock.now.addingTimeInterval(10))
        #expect(entry.staleUntil == clock.now.addingTimeInterval(70))
    }

    @Test func theTiersBackgroundWorkEndsWithIt() async throws {
        let clock = ManualClock()
        var cache: MemoryCache<String, Data>? = try MemoryCache<String, Data>(clock: clock)
        _ = try await cache!.value(forKey: "k", expiry: .seconds(10), options: Self.options) { Data("v1".utf8) }
        clock.advance(by: 12)
        let loader = HeldLoader()
        _ = try await cache!.value(forKey: "k", expiry: .seconds(10), options: Self.options) {
            try await loader.hold()
            return Data("v2".utf8)
        }
        try await loader.waitUntilHeld()
        weak let gone = cache
        cache = nil
        try await loader.waitUntilCancelled()
        #expect(gone == nil)
    }

    @Test func aBatchOfFiftyWithTwentyPresentLoadsTheThirtyMissingInOneCall() async throws {
        let (cache, _, _) = try makeCache()
        let keys = (0..<50).map { "key-\($0)" }
        for key in keys.prefix(20) { try cache.setValue(Data(key.utf8), forKey: key) }
        let calls = Locked<[[String]]>([])
        let values = try await cache.values(forKeys: keys) { missing in
            calls.withLock { $0.append(missing) }
            return Dictionary(uniqueKeysWithValues: missing.map { ($0, Data("loaded".utf8)) })
        }
        #expect(calls.value.count == 1)
        #expect(Set(calls.value[0]) == Set(keys[20...]))
        #expect(values.count == 50)
        #expect(cache.count == 50)
        #expect(cache.value(forKey: "key-49") == Data("loaded".utf8))
        #expect(cache.value(forKey: "key-1") == Data("key-1".utf8))
    }

    @Test func aBatchRacingASucceedingLoadOfOneOfItsKeysLoadsItOnce() async throws {
        // Given a single-key load of "a" racing a batch of "a" and "b", in many interleavings (the single
        // load may end before, while or after the batch joins it, or join the batch's load)
        for round in 0..<300 {
            let cache = try MemoryCache<String, Int>()
            let batchCalls = Locked(0)
            async let single = cache.value(forKey: "a", expiry: .seconds(10)) {
                await Task.yield()
                return round
            }
            async let batch = cache.values(forKeys: ["a", "b"], expiry: .seconds(10)) { keys in
                batchCalls.withLock { $0 += 1 }
                return Dictionary(uniqueKeysWithValues: keys.map { ($0, -1) })
            }
            let (a, found) = try await (single, batch)
            // Then one load of "a" ran, whichever owned it: both callers got its value, and the batch
            // loader ran once (never again for a key whose joined load had already stored its value)
            #expect(found["a"] == a, "round \(round)")
            #expect(batchCalls.withLock { $0 } == 1, "round \(round)")
        }
    }
}

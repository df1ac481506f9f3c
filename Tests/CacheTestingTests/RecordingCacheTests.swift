import CacheCore
import CacheTesting
import Foundation
import Testing

@Suite struct RecordingCacheTests {
    @Test func recordsEveryCallInOrderWithTheResolvedExpiry() async throws {
        let clock = ManualClock()
        let cache = RecordingCache<String, Data>(clock: clock)
        let start = clock.now

        try await cache.setValue(Data("v".utf8), forKey: "a", expiry: .seconds(60))
        _ = try await cache.value(forKey: "a")
        _ = try await cache.contains("b")
        try await cache.setEntry(CacheEntry(value: Data()), forKey: "b")
        try await cache.removeEntry(forKey: "a")
        try await cache.removeAll()

        #expect(
            cache.calls == [
                .setEntry("a", expiresAt: start.addingTimeInterval(60)),
                .entry("a"),
                .entry("b"),
                .setEntry("b", expiresAt: nil),
                .removeEntry("a"),
                .removeAll,
            ])
    }

    @Test func recordsCompletionHandlerCallsAsTheOperationTheyWrap() async throws {
        let cache = RecordingCache<String, Int>(clock: ManualClock())
        await confirmation { delivered in
            await withCheckedContinuation { continuation in
                cache.value(forKey: "k") { result in
                    delivered()
                    continuation.resume()
                }
            }
        }
        #expect(cache.calls == [.entry("k")])
    }

    @Test func recordsCallsThatThrow() async throws {
        let clock = ManualClock()
        let failing = FaultInjectingCache<String, Data>(clock: clock)
        failing.failAlways(.removeEntry)
        let cache = RecordingCache(wrapping: failing)

        await #expect(throws: CacheError.self) { try await cache.removeEntry(forKey: "gone") }
        #expect(cache.calls == [.removeEntry("gone")])
    }

    @Test func resetForgetsCallsButKeepsEntries() async throws {
        let cache = RecordingCache<String, Int>(clock: ManualClock())
        try await cache.setValue(42, forKey: "answer", expiry: .never)
        cache.reset()
        #expect(cache.calls.isEmpty)
        #expect(try await cache.value(forKey: "answer") == 42)
        #expect(cache.calls == [.entry("answer")])
    }

    @Test func callDescribesItsOperationAndKey() {
        typealias Call = RecordingCache<String, Data>.Call
        let date = Date(timeIntervalSince1970: 0)
        #expect(Call.entry("a").operation == .entry)
        #expect(Call.setEntry("a", expiresAt: nil).operation == .setEntry)
        #expect(Call.removeEntry("a").operation == .removeEntry)
        #expect(Call.removeAll.operation == .removeAll)
        #expect(Call.removeEntry("a").key == "a")
        #expect(Call.removeAll.key == nil)
        #expect(Call.setEntry("a", expiresAt: date) != Call.setEntry("a", expiresAt: nil))
        #expect(Call.entry("k").description == "entry(k)")
        #expect(Call.setEntry("k", expiresAt: nil).description == "setEntry(k, expiresAt: nil)")
    }

    @Test func ownStorageHonoursExpiryAndClockJumps() async throws {
        let clock = ManualClock()
        let cache = RecordingCache<String, Int>(clock: clock)
        let start = clock.now
        try await cache.setValue(1, forKey: "k", expiry: .seconds(10))
        clock.set(to: start.addingTimeInterval(10))
        #expect(try await cache.value(forKey: "k") == nil)
        clock.set(to: start)
        #expect(try await cache.value(forKey: "k") == nil)
    }

    @Test func recordsConcurrentCallsWithoutLosingAny() async throws {
        let cache = RecordingCache<Int, Int>(clock: ManualClock())
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<100 {
                group.addTask { try? await cache.setValue(index, forKey: index, expiry: .never) }
            }
        }
        let keys = cache.calls.compactMap(\.key)
        #expect(keys.sorted() == Array(0..<100))
    }
}

import CacheCore
import CacheTesting
import Foundation
import Testing

/// The completion-handler variants in `Cache+Completion.swift` deliver what the async methods return,
/// each completion exactly once.
@Suite struct CompletionHandlerTests {
    struct Boom: Error, Equatable {}

    let clock = ManualClock()

    func makeCache() -> FaultInjectingCache<String, Int> {
        FaultInjectingCache(clock: clock)
    }

    @Test func entryDeliversTheSameEntryAsTheAsyncRead() async throws {
        let cache = makeCache()
        let stored = CacheEntry(value: 7, expiresAt: clock.now.addingTimeInterval(60), cost: 2)
        try await cache.setEntry(stored, forKey: "k")

        let delivered = await deliveredResult { cache.entry(forKey: "k", completion: $0) }
        let viaAsync = try await cache.entry(forKey: "k")

        #expect(try delivered?.get() == viaAsync)
        #expect(try delivered?.get() == stored)
    }

    @Test func entryAndValueDeliverNilOnAMiss() async throws {
        let cache = makeCache()
        let entry = await deliveredResult { cache.entry(forKey: "absent", completion: $0) }
        let value = await deliveredResult { cache.value(forKey: "absent", completion: $0) }
        #expect(try entry?.get() == .some(nil))
        #expect(try value?.get() == .some(nil))
    }

    @Test func valueDeliversTheSameValueAsTheAsyncRead() async throws {
        let cache = makeCache()
        try await cache.setValue(42, forKey: "k", expiry: .never)
        let delivered = await deliveredResult { cache.value(forKey: "k", completion: $0) }
        #expect(try delivered?.get() == 42)
        #expect(try await cache.value(forKey: "k") == 42)
    }

    @Test func setEntryStoresWhatAnAsyncReadThenSees() async throws {
        let cache = makeCache()
        let entry = CacheEntry(value: 3, expiresAt: clock.now.addingTimeInterval(5))
        let delivered = await deliveredResult { cache.setEntry(entry, forKey: "k", completion: $0) }
        #expect(throws: Never.self) { try delivered?.get() }
        #expect(try await cache.entry(forKey: "k") == entry)
    }

    @Test func setValueResolvesTheExpiryAgainstTheCacheClockAtTheCall() async throws {
        let cache = makeCache()
        let start = clock.now
        let delivered = await deliveredResult {
            cache.setValue(5, forKey: "k", expiry: .seconds(10), cost: 4, completion: $0)
        }
        #expect(throws: Never.self) { try delivered?.get() }
        #expect(
            try await cache.entry(forKey: "k") == CacheEntry(value: 5, expiresAt: start.addingTimeInterval(10), cost: 4)
        )
    }

    @Test func removeEntryAndRemoveAllRemoveWhatTheAsyncCallsWould() async throws {
        let cache = makeCache()
        for key in ["a", "b", "c"] { try await cache.setValue(1, forKey: key, expiry: .never) }

        let removed = await deliveredResult { cache.removeEntry(forKey: "a", completion: $0) }
        #expect(throws: Never.self) { try removed?.get() }
        #expect(try await cache.value(forKey: "a") == nil)
        #expect(try await cache.value(forKey: "b") == 1)

        let wiped = await deliveredResult { cache.removeAll(completion: $0) }
        #expect(throws: Never.self) { try wiped?.get() }
        #expect(try await cache.value(forKey: "b") == nil)
        #expect(try await cache.value(forKey: "c") == nil)
    }

    @Test(arguments: CacheOperation.allCases)
    func errorsAreDeliveredAsFailuresOnce(_ operation: CacheOperation) async throws {
        // Given the operation fails on every call
        let cache = makeCache()
        cache.failAlways(operation, with: Boom())

        // When it is called through its completion-handler variant, then the same error arrives once
        let results: [Result<Void, any Error>]
        switch operation {
        case .entry:
            results = await deliveredResults { done in cache.entry(forKey: "k") { done($0.map { _ in }) } }
        case .setEntry:
            results = await deliveredResults { cache.setValue(1, forKey: "k", expiry: .never, completion: $0) }
        case .removeEntry:
            results = await deliveredResults { cache.removeEntry(forKey: "k", completion: $0) }
        case .removeAll:
            results = await deliveredResults { cache.removeAll(completion: $0) }
        }
        #expect(results.count == 1)
        #expect(throws: Boom()) { try results.first?.get() }
    }

    @Test func valueDeliversTheReadError() async throws {
        let cache = makeCache()
        cache.failNext(.entry, with: CacheError(.permissionDenied, "no access"))
        let delivered = await deliveredResult { cache.value(forKey: "k", completion: $0) }
        #expect(throws: CacheError.self) { try delivered?.get() }
        #expect(try await cache.value(forKey: "k") == nil)
    }

    @Test func completionsStartedTogetherEachRunOnce() async throws {
        let cache = makeCache()
        let results = ResultBox<Void>()
        // 50 writes started at once: each completion is confirmed once, none lost, none doubled.
        await confirmation("write completed", expectedCount: 50) { completed in
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        _ = await deliveredResults { done in
                            cache.setValue(index, forKey: "k\(index)", expiry: .never) { result in
                                results.append(result)
                                completed()
                                done(result)
                            }
                        }
                    }
                }
            }
        }
        #expect(results.all.count == 50)
        for index in 0..<50 { #expect(try await cache.value(forKey: "k\(index)") == index) }
    }
}

import CacheCore
import CacheTesting
import Foundation
import MultiCache
import StrataTestSupport
import Testing

private struct LoadFailure: Error, Equatable {}

@Suite(.timeLimit(.minutes(10)))
struct MultiCacheLoadOnceTests {
    @Test func hundredConcurrentCallersForOneKeyRunTheLoaderOnce() async throws {
        // Given 100 callers that all miss, and a loader held until every one of them has joined
        let tiers = try TwoTiers()
        let cache = tiers.cache
        let gate = Gate()
        let runs = Counter()
        let values = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    try await cache.value(forKey: "k", expiry: .seconds(60)) {
                        runs.increment()
                        try await gate.wait()
                        return bytes("loaded")
                    }
                }
            }
            try await tiers.events.wait(for: .joinedLoad, count: 99)
            // When the one load finishes
            gate.open()
            return try await group.reduce(into: [Data]()) { $0.append($1) }
        }

        // Then all 100 got its value, the loader ran once, and every tier holds the value for 60 s
        #expect(values == Array(repeating: bytes("loaded"), count: 100))
        #expect(runs.value == 1)
        #expect(cache.statistics.loads == 1)
        #expect(cache.statistics.loadsShared == 99)
        let expiresAt = tiers.clock.now.addingTimeInterval(60)
        for tier in [tiers.fast, tiers.slow] {
            let stored = try await tier.entry(forKey: "k")
            #expect(stored?.value == bytes("loaded"))
            #expect(stored?.expiresAt == expiresAt)
        }
    }

    @Test func aTrailingClosureWithoutAnExpiryIsTheLoaderAndTheValueNeverExpires() async throws {
        // Given a cache, and a load-once call that names no expiry (it once matched the completion-handler
        // form of value(forKey:) and failed to compile)
        let tiers = try TwoTiers()

        // When it loads
        let value = try await tiers.cache.value(forKey: "k") { bytes("loaded") }

        // Then the value is stored with no expiry in both tiers
        #expect(value == bytes("loaded"))
        tiers.clock.advance(by: .seconds(100 * 365 * 86_400))
        #expect(try await tiers.fast.entry(forKey: "k")?.expiresAt == nil)
        #expect(try await tiers.slow.entry(forKey: "k")?.value == bytes("loaded"))
    }

    @Test func hundredCallersOverTenKeysRunTheLoaderTenTimes() async throws {
        let tiers = try TwoTiers()
        let cache = tiers.cache
        let gate = Gate()
        let runs = Counter()
        let results = try await withThrowingTaskGroup(of: (String, Data).self) { group in
            for caller in 0..<100 {
                let key = "key-\(caller % 10)"
                group.addTask {
                    let value = try await cache.value(forKey: key, expiry: .never) {
                        runs.increment()
                        try await gate.wait()
                        return bytes("value of \(key)")
                    }
                    return (key, value)
                }
            }
            try await tiers.events.wait(for: .joinedLoad, count: 90)
            gate.open()
            return try await group.reduce(into: [(String, Data)]()) { $0.append($1) }
        }
        #expect(results.count == 100)
        #expect(results.allSatisfy { key, value in value == bytes("value of \(key)") })
        #expect(runs.value == 10)
        #expect(cache.statistics.loads == 10)
        for index in 0..<10 {
            #expect(try await tiers.slow.value(forKey: "key-\(index)") == bytes("value of key-\(index)"))
        }
    }

    @Test func thrownErrorReachesEveryWaiterIsNotCachedAndTheNextCallLoadsAgain() async throws {
        // Given 10 callers joined to a loader that will throw
        let tiers = try TwoTiers()
        let cache = tiers.cache
        let gate = Gate()
        let runs = Counter()
        let outcomes = try await withThrowingTaskGroup(of: Result<Data, any Error>.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    do {
                        return .success(
                            try await cache.value(forKey: "k", expiry: .never) {
                                runs.increment()
                                try await gate.wait()
                                throw LoadFailure()
                            })
                    } catch {
                        return .failure(error)
                    }
                }
            }
            try await tiers.events.wait(for: .joinedLoad, count: 9)
            gate.open()
            return try await group.reduce(into: [Result<Data, any Error>]()) { $0.append($1) }
        }

        // Then every caller got the error, the loader ran once, and nothing was stored
        #expect(outcomes.count == 10)
        for outcome in outcomes {
            #expect(throws: LoadFailure.self) { try outcome.get() }
        }
        #expect(runs.value == 1)
        #expect(try await tiers.fast.value(forKey: "k") == nil)
        #expect(try await tiers.slow.value(forKey: "k") == nil)

        // And an 11th call loads again
        let value = try await cache.value(forKey: "k", expiry: .never) {
            runs.increment()
            return bytes("second try")
        }
        #expect(value == bytes("second try"))
        #expect(runs.value == 2)
        #expect(try await tiers.slow.value(forKey: "k") == bytes("second try"))
    }

    enum Removal: String, CaseIterable, CustomStringConvertible {
        case removeAll, removeEntry
        var description: String { rawValue }

        func perform(on cache: MultiCache<String, Data>) async throws {
            switch self {
            case .removeAll: try await cache.removeAll()
            case .removeEntry: try await cache.removeEntry(forKey: "k")
            }
        }
    }

    @Test(arguments: Removal.allCases)
    func removalDuringABlockedLoadKeepsItsResultOutOfEveryTier(_ removal: Removal) async throws {
        // Given a load that is blocked in its loader
        let tiers = try TwoTiers()
        let cache = tiers.cache
        let loader = HeldLoader()
        async let stale = cache.value(forKey: "k", expiry: .never) {
            try await loader.hold()
            return bytes("old")
        }
        try await loader.waitUntilHeld()

        // When the key (or everything) is removed, then the load finishes
        try await removal.perform(on: cache)
        loader.release()

        // Then its waiter still gets the loaded value, but no tier holds it
        #expect(try await stale == bytes("old"))
        #expect(try await tiers.fast.value(forKey: "k") == nil)
        #expect(try await tiers.slow.value(forKey: "k") == nil)
        // And a new load returns the new value, which is stored
        let fresh = try await cache.value(forKey: "k", expiry: .never) { bytes("new") }
        #expect(fresh == bytes("new"))
        #expect(try await tiers.fast.value(forKey: "k") == bytes("new"))
        #expect(cache.statistics.loads == 2)
    }

    @Test(arguments: Removal.allCases)
    func callerAfterARemovalStartsANewLoadInsteadOfJoiningTheFencedOne(_ removal: Removal) async throws {
        // Given a blocked load, fenced by a removal
        let tiers = try TwoTiers()
        let cache = tiers.cache
        let loader = HeldLoader()
        async let stale = cache.value(forKey: "k", expiry: .never) {
            try await loader.hold()
            return bytes("old")
        }
        try await loader.waitUntilHeld()
        try await removal.perform(on: cache)

        // When another caller asks while the old load is still blocked
        let fresh = try await cache.value(forKey: "k", expiry: .never) { bytes("new") }
        loader.release()

        // Then it ran its own load, and the old load, finishing later, did not overwrite it
        #expect(fresh == bytes("new"))
        #expect(try await stale == bytes("old"))
        #expect(try await tiers.fast.value(forKey: "k") == bytes("new"))
        #expect(try await tiers.slow.value(forKey: "k") == bytes("new"))
        #expect(cache.statistics.loadsShared == 0)
    }

    @Test func writeDuringALoadWinsOverTheLoadedValue() async throws {
        let tiers = try TwoTiers()
        let cache = tiers.cache
        let loader = HeldLoader()
        async let loaded = cache.value(forKey: "k", expiry: .never) {
            try await loader.hold()
            return bytes("loaded")
        }
        try await loader.waitUntilHeld()
        try await cache.setValue(bytes("written"), forKey: "k", expiry: .never)
        loader.release()
        #expect(try await loaded == bytes("loaded"))
        #expect(try await cache.value(forKey: "k") == bytes("written"))
        #expect(try await tiers.slow.value(forKey: "k") == bytes("written"))
    }

    @Test func cancelledWaiterGetsCancellationErrorWhileTheOthersGetTheValue() async throws {
        // Given a load started by `starter`, joined by two more callers
        let tiers = try TwoTiers()
        let cache = tiers.cache
        let held = HeldLoader()
        let runs = Counter()
        let loader: @Sendable () async throws -> Data = {
            runs.increment()
            try await held.hold()
            return bytes("v")
        }
        let starter = Task { try await cache.value(forKey: "k", expiry: .never, orLoad: loader) }
        try await held.waitUntilHeld()
        let second = Task { try await cache.value(forKey: "k", expiry: .never, orLoad: loader) }
        let third = Task { try await cache.value(forKey: "k", expiry: .never, orLoad: loader) }
        try await tiers.events.wait(for: .joinedLoad, count: 2)

        // When the caller that started the load cancels
        starter.cancel()

        // Then it gets CancellationError at once, while the load is still blocked
        await #expect(throws: CancellationError.self) { try await starter.value }
        held.release()
        // And the others get the value from the one load, which is stored
        #expect(try await second.value == bytes("v"))
        #expect(try await third.value == bytes("v"))
        #expect(runs.value == 1)
        #expect(try await tiers.fast.value(forKey: "k") == bytes("v"))
    }

    @Test func whenEveryWaiterCancelsTheLoadStopsAndTheNextCallSucceeds() async throws {
        // Given two callers waiting on one blocked load whose loader honours cancellation
        let tiers = try TwoTiers()
        let cache = tiers.cache
        let held = HeldLoader()
        let loader: @Sendable () async throws -> Data = {
            try await held.hold()
            return bytes("stale")
        }
        let first = Task { try await cache.value(forKey: "k", expiry: .never, orLoad: loader) }
        try await held.waitUntilHeld()
        let second = Task { try await cache.value(forKey: "k", expiry: .never, orLoad: loader) }
        try await tiers.events.wait(for: .joinedLoad, count: 1)

        // When both cancel
        first.cancel()
        second.cancel()

        // Then both get CancellationError and the load's task is cancelled
        await #expect(throws: CancellationError.self) { try await first.value }
        await #expect(throws: CancellationError.self) { try await second.value }
        try await held.waitUntilCancelled()
        // And the next call runs a new load that succeeds and is stored
        let value = try await cache.value(forKey: "k", expiry: .never) { bytes("fresh") }
        #expect(value == bytes("fresh"))
        #expect(cache.statistics.loads == 2)
        #expect(try await tiers.slow.value(forKey: "k") == bytes("fresh"))
    }

    @Test func emptyDataIsAHitForLoadOnce() async throws {
        let tiers = try TwoTiers()
        let runs = Counter()
        let loader: @Sendable () async throws -> Data = {
            runs.increment()
            return Data()
        }
        #expect(try await tiers.cache.value(forKey: "k", expiry: .never, orLoad: loader) == Data())
        #expect(try await tiers.cache.value(forKey: "k", expiry: .never, orLoad: loader) == Data())
        #expect(runs.value == 1)
        #expect(try await tiers.fast.value(forKey: "k") == Data())
        #expect(tiers.cache.statistics.hits == 1)
    }

    @Test func hitInAnyTierSkipsTheLoader() async throws {
        let tiers = try TwoTiers()
        try await tiers.slow.setValue(bytes("cached"), forKey: "k", expiry: .never)
        let value = try await tiers.cache.value(forKey: "k", expiry: .never) {
            Issue.record("the loader ran on a hit")
            return bytes("loaded")
        }
        #expect(value == bytes("cached"))
        #expect(try await tiers.fast.value(forKey: "k") == bytes("cached"))
        #expect(tiers.cache.statistics.loads == 0)
    }

    @Test func callerThatMissedJustBeforeALoadStoredDoesNotLoadAgain() async throws {
        // Given a first load blocked in its loader
        let tiers = try TwoTiers()
        let cache = tiers.cache
        let loader = HeldLoader()
        let runs = Counter()
        async let first = cache.value(forKey: "k", expiry: .never) {
            runs.increment()
            try await loader.hold()
            return bytes("first")
        }
        try await loader.waitUntilHeld()
        // And a second caller whose read is parked in the slow tier, after missing in the fast one
        tiers.slow.hold(.entry)
        async let second = cache.value(forKey: "k", expiry: .never) {
            runs.increment()
            return bytes("second")
        }
        await tiers.slow.waitUntilHeld(.entry)

        // When the first load finishes and stores, and the second caller's slow read then fails (a miss)
        loader.release()
        #expect(try await first == bytes("first"))
        tiers.slow.failNext(.entry)
        tiers.slow.release(.entry)

        // Then the second caller finds what the first load stored instead of loading again
        #expect(try await second == bytes("first"))
        #expect(runs.value == 1)
    }

    @Test func failureToStoreALoadedValueIsReportedAndTheCallerStillGetsIt() async throws {
        // Given a slow tier whose next write fails
        let events = EventLog()
        let tiers = try TwoTiers(observer: events.observer)
        tiers.slow.failNext(.setEntry)

        // When a load-once call misses and loads
        let value = try await tiers.cache.value(forKey: "k", expiry: .never) { bytes("loaded") }

        // Then the caller has the value, the fast tier holds it, and the slow tier's failure was reported
        #expect(value == bytes("loaded"))
        #expect(try await tiers.fast.value(forKey: "k") == bytes("loaded"))
        #expect(try await tiers.slow.value(forKey: "k") == nil)
        #expect(events.all.map(\.kind) == [.writeBackFailed])
        #expect(events.all.first?.tierIndex == 1)
        #expect(tiers.cache.tierStatistics.map(\.errors) == [0, 1])
    }

    @Test func completionHandlerVariantLoadsOnce() async throws {
        let tiers = try TwoTiers()
        let runs = Counter()
        let value: Data = try await withCheckedThrowingContinuation { continuation in
            tiers.cache.value(
                forKey: "k", expiry: .never,
                orLoad: {
                    runs.increment()
                    return bytes("v")
                },
                completion: { continuation.resume(with: $0) })
        }
        #expect(value == bytes("v"))
        #expect(runs.value == 1)
        #expect(try await tiers.slow.value(forKey: "k") == bytes("v"))
    }
}

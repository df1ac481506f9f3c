import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import StrataTestSupport
import Testing

@testable import MultiCache

/// Issue 17 on a MultiCache: fail-safe, stale-while-revalidate, refresh-ahead and loader timeouts, each
/// checked for the value returned, the loader calls run, what each tier holds, and removals in flight.
/// Time is a ManualClock; loads are held with gates; no sleeps. Run under ThreadSanitizer.
@Suite(.timeLimit(.minutes(10)))
struct MultiCacheLoadOptionsTests {
    static let failSafe = LoadOptions(failSafe: .init(maximumStaleness: .seconds(60), throttle: .seconds(5)))
    static let revalidate = LoadOptions(staleWhileRevalidate: .seconds(30))

    /// Stores `value` under `key` through a load with `options`, expiring in `seconds`.
    private func seed(
        _ tiers: ResilientTiers, _ key: String = "k", _ value: String = "v1", seconds: Int = 10,
        options: LoadOptions = failSafe
    ) async throws {
        _ = try await tiers.cache.value(forKey: key, expiry: .after(.seconds(seconds)), options: options) {
            bytes(value)
        }
    }

    // MARK: - Plain reads and retention

    @Test func aPlainReadNeverReturnsAStaleEntryWhileTheLoadPathStillFindsIt() async throws {
        let tiers = try ResilientTiers()
        try await seed(tiers)
        let entry = try #require(try await tiers.fast.entryIncludingStale(forKey: "k"))
        #expect(entry.staleUntil == entry.expiresAt.map { $0.addingTimeInterval(60) })
        #expect(try await tiers.slow.entry(forKey: "k")?.staleUntil == entry.staleUntil)

        tiers.clock.advance(by: 15)

        #expect(try await tiers.cache.value(forKey: "k") == nil)
        #expect(try await tiers.plain("k") == (nil, nil))
        #expect(try await tiers.held("k") == (bytes("v1"), bytes("v1")))
        #expect(try await tiers.cache.entryIncludingStale(forKey: "k")?.value == bytes("v1"))
        // Kept only as long as the longest grace: gone from every tier at expiry + 60 s
        tiers.clock.advance(by: 55)
        #expect(try await tiers.held("k") == (nil, nil))
    }

    @Test func invalidOptionsAreATypedError() async throws {
        let tiers = try ResilientTiers()
        for options in [
            LoadOptions(refreshAhead: 1.5), LoadOptions(staleWhileRevalidate: .seconds(-1)),
            LoadOptions(hardTimeout: .zero),
            LoadOptions(failSafe: .init(maximumStaleness: .seconds(1), throttle: .seconds(-1))),
        ] {
            await #expect(throws: CacheError.self) {
                _ = try await tiers.cache.value(forKey: "k", options: options) { bytes("x") }
            }
        }
        #expect(tiers.cache.statistics.loads == 0)
    }

    @Test(arguments: [(2, 1), (1, 1)])
    func aSoftTimeoutNotShorterThanTheHardOneIsRefused(soft: Int, hard: Int) async throws {
        let tiers = try ResilientTiers()
        let options = LoadOptions(softTimeout: .seconds(soft), hardTimeout: .seconds(hard))
        let error = await #expect(throws: CacheError.self) {
            _ = try await tiers.cache.value(forKey: "k", options: options) { bytes("x") }
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("softTimeout") == true)
        #expect(tiers.cache.statistics.loads == 0)
        // A soft timeout shorter than the hard one is accepted
        let accepted = LoadOptions(softTimeout: .seconds(1), hardTimeout: .seconds(2))
        #expect(try await tiers.cache.value(forKey: "k", options: accepted) { bytes("x") } == bytes("x"))
    }

    // MARK: - Fail-safe

    @Test func failSafeServesTheStaleValueWhenTheLoaderThrowsAndLeavesTheTiersAlone() async throws {
        let tiers = try ResilientTiers()
        try await seed(tiers)
        tiers.clock.advance(by: 15)

        let value = try await tiers.cache.value(forKey: "k", expiry: .seconds(10), options: Self.failSafe) {
            throw BackendDown()
        }

        #expect(value == bytes("v1"))
        #expect(tiers.cache.statistics.loads == 2)
        // The stale entry is not made fresh: plain reads still miss, the tiers still hold it stale
        #expect(try await tiers.plain("k") == (nil, nil))
        #expect(try await tiers.held("k") == (bytes("v1"), bytes("v1")))
    }

    @Test func failSafeNeverServesBeyondTheMaximumStaleness() async throws {
        let tiers = try ResilientTiers()
        // Kept longer than fail-safe allows (grace 120 s), so only the staleness bound stops it
        try await seed(
            tiers,
            options: LoadOptions(failSafe: .init(maximumStaleness: .seconds(60)), staleWhileRevalidate: .seconds(120)))
        tiers.clock.advance(by: 10 + 61)
        #expect(try await tiers.held("k") == (bytes("v1"), bytes("v1")))

        await #expect(throws: BackendDown.self) {
            _ = try await tiers.cache.value(forKey: "k", expiry: .seconds(10), options: Self.failSafe) {
                throw BackendDown()
            }
        }
    }

    @Test func hundredCallersDuringAFailingBackendRunOneLoaderCallPerThrottlePeriod() async throws {
        let tiers = try ResilientTiers()
        try await seed(tiers)
        tiers.clock.advance(by: 15)
        let cache = tiers.cache
        let runs = Counter()

        /// 100 concurrent callers against a failing backend; the loader is held until the other 99 joined.
        func burst(joinedBefore: Int) async throws -> [Data] {
            let gate = Gate()
            return try await withThrowingTaskGroup(of: Data.self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        try await cache.value(forKey: "k", expiry: .seconds(10), options: Self.failSafe) {
                            runs.increment()
                            try await gate.wait()
                            throw BackendDown()
                        }
                    }
                }
                try await tiers.events.wait(for: .joinedLoad, count: joinedBefore + 99)
                gate.open()
                return try await group.reduce(into: [Data]()) { $0.append($1) }
            }
        }

        // First throttle period: one loader call, every caller gets the stale value
        #expect(try await burst(joinedBefore: 0) == Array(repeating: bytes("v1"), count: 100))
        #expect(runs.value == 1)
        // Within the throttle: 100 more callers run no loader at all
        tiers.clock.advance(by: 4)
        let throttled = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    try await cache.value(forKey: "k", expiry: .seconds(10), options: Self.failSafe) {
                        runs.increment()
                        throw BackendDown()
                    }
                }
            }
            return try await group.reduce(into: [Data]()) { $0.append($1) }
        }
        #expect(throttled == Array(repeating: bytes("v1"), count: 100))
        #expect(runs.value == 1)
        // Next throttle period: one more loader call
        tiers.clock.advance(by: 2)
        #expect(try await burst(joinedBefore: 99) == Array(repeating: bytes("v1"), count: 100))
        #expect(runs.value == 2)
        #expect(tiers.cache.statistics.loads == 3)
    }

    @Test func aWriteEndsTheThrottle() async throws {
        let tiers = try ResilientTiers()
        try await seed(tiers)
        tiers.clock.advance(by: 15)
        _ = try await tiers.cache.value(forKey: "k", expiry: .seconds(10), options: Self.failSafe) {
            throw BackendDown()
        }
        // A write of the key, which then expires again, lifts the throttle: the next call loads
        try await tiers.cache.setEntry(
            CacheEntry(
                value: bytes("w"), expiresAt: tiers.clock.now.addingTimeInterval(1),
                staleUntil: tiers.clock.now.addingTimeInterval(60)),
            forKey: "k")
        tiers.clock.advance(by: 2)
        let runs = Counter()
        let value = try await tiers.cache.value(forKey: "k", expiry: .seconds(10), options: Self.failSafe) {
            runs.increment()
            throw BackendDown()
        }
        #expect(value == bytes("w"))
        #expect(runs.value == 1)
    }

    // MARK: - Stale-while-revalidate

    @Test func staleWhileRevalidateServesAtOnceAndRunsOneBackgroundRefresh() async throws {
        let tiers = try ResilientTiers()
        try await seed(tiers, options: Self.revalidate)
        tiers.clock.advance(by: 12)
        let loader = HeldLoader()
        let runs = Counter()

        // Ten callers within the grace all get the stale value at once while one refresh is held
        for _ in 0..<10 {
            let value = try await tiers.cache.value(forKey: "k", expiry: .seconds(10), options: Self.revalidate) {
                runs.increment()
                try await loader.hold()
                return bytes("v2")
            }
            #expect(value == bytes("v1"))
        }
        try await loader.waitUntilHeld()
        #expect(runs.value == 1)
        #expect(try await tiers.plain("k") == (nil, nil))

        // When the refresh ends, every tier holds the new value, fresh
        loader.release()
        try await tiers.events.wait(for: .loadFinished, count: 2)
        #expect(try await tiers.plain("k") == (bytes("v2"), bytes("v2")))
        #expect(try await tiers.cache.value(forKey: "k") == bytes("v2"))
        #expect(tiers.cache.statistics.loads == 2)
    }

    @Test func pastTheGraceTheCallerWaitsForTheLoad() async throws {
        let tiers = try ResilientTiers()
        try await seed(tiers, options: Self.revalidate)
        tiers.clock.advance(by: 10 + 31)
        let value = try await tiers.cache.value(forKey: "k", expiry: .seconds(10), options: Self.revalidate) {
            bytes("v2")
        }
        #expect(value == bytes("v2"))
        #expect(try await tiers.plain("k") == (bytes("v2"), bytes("v2")))
    }

    @Test(arguments: [true, false])
    func aBackgroundRefreshFencedByARemovalNeverLands(removesAll: Bool) async throws {
        let tiers = try ResilientTiers()
        try await seed(tiers, options: Self.revalidate)
        tiers.clock.advance(by: 12)
        let loader = HeldLoader()
        let value = try await tiers.cache.value(forKey: "k", expiry: .seconds(10), options: Self.revalidate) {
            try await loader.hold()
            return bytes("v2")
        }
        #expect(value == bytes("v1"))
        try await loader.waitUntilHeld()

        if removesAll { try await tiers.cache.removeAll() } else { try await tiers.cache.removeEntry(forKey: "k") }
        loader.release()
        try await tiers.events.wait(for: .loadFinished, count: 2)

        #expect(try await tiers.held("k") == (nil, nil))
        // And the next caller loads afresh
        #expect(
            try await tiers.cache.value(forKey: "k", expiry: .seconds(10), options: Self.revalidate) { bytes("v3") }
                == bytes("v3"))
    }

    @Test func aBackgroundRefreshIsCancelledWhenTheCacheGoesAway() async throws {
        var tiers: ResilientTiers? = try ResilientTiers()
        try await seed(tiers!, options: Self.revalidate)
        tiers!.clock.advance(by: 12)
        let loader = HeldLoader()
        _ = try await tiers!.cache.value(forKey: "k", expiry: .seconds(10), options: Self.revalidate) {
            try await loader.hold()
            return bytes("v2")
        }
        try await loader.waitUntilHeld()
        let fast = tiers!.fast
        weak let released = tiers!.cache
        tiers = nil

        try await loader.waitUntilCancelled()
        #expect(released == nil)
        #expect(try await fast.entryIncludingStale(forKey: "k")?.value == bytes("v1"))
    }

    // MARK: - Refresh-ahead

    @Test func refreshAheadRefreshesOnceLateInTheLifetime() async throws {
        let tiers = try ResilientTiers()
        let options = LoadOptions(refreshAhead: 0.8)
        try await seed(tiers, seconds: 100, options: options)
        let runs = Counter()
        let load: @Sendable () async throws -> Data = {
            runs.increment()
            return bytes("v2")
        }

        // Before 80 % of the lifetime: a plain hit
        tiers.clock.advance(by: 79)
        #expect(
            try await tiers.cache.value(forKey: "k", expiry: .seconds(100), options: options, orLoad: load)
                == bytes("v1"))
        #expect(runs.value == 0)

        // After it: the current value, and one refresh that stores a new lifetime
        tiers.clock.advance(by: 2)
        #expect(
            try await tiers.cache.value(forKey: "k", expiry: .seconds(100), options: options, orLoad: load)
                == bytes("v1"))
        try await tiers.events.wait(for: .loadFinished, count: 2)
        #expect(runs.value == 1)
        let entry = try #require(try await tiers.slow.entry(forKey: "k"))
        #expect(entry.value == bytes("v2"))
        #expect(entry.expiresAt == tiers.clock.now.addingTimeInterval(100))
        #expect(try await tiers.fast.value(forKey: "k") == bytes("v2"))
    }

    // MARK: - Timeouts

    @Test func aSoftTimeoutServesTheStaleValueAndTheLoadStillLands() async throws {
        let tiers = try ResilientTiers()
        try await seed(tiers)
        tiers.clock.advance(by: 15)
        let options = LoadOptions(failSafe: .init(maximumStaleness: .seconds(60)), softTimeout: .seconds(1))
        let loader = HeldLoader()
        let cache = tiers.cache
        let call = Task {
            try await cache.value(forKey: "k", expiry: .seconds(10), options: options) {
                try await loader.hold()
                return bytes("v2")
            }
        }
        try await loader.waitUntilHeld()
        await tiers.clock.waitForSleepers(count: 1)
        tiers.clock.advance(by: 1)

        #expect(try await call.value == bytes("v1"))
        loader.release()
        try await tiers.events.wait(for: .loadFinished, count: 2)
        #expect(try await tiers.plain("k") == (bytes("v2"), bytes("v2")))
        #expect(tiers.cache.statistics.loads == 2)
    }

    @Test func aSoftTimeoutWithoutAStaleValueWaitsForTheLoad() async throws {
        let tiers = try ResilientTiers()
        let options = LoadOptions(softTimeout: .seconds(1))
        let loader = HeldLoader()
        let cache = tiers.cache
        let call = Task {
            try await cache.value(forKey: "k", expiry: .seconds(10), options: options) {
                try await loader.hold()
                return bytes("v2")
            }
        }
        try await loader.waitUntilHeld()
        tiers.clock.advance(by: 5)
        #expect(tiers.clock.sleepCount == 0)
        loader.release()
        #expect(try await call.value == bytes("v2"))
    }

    @Test func aHardTimeoutThrowsATypedErrorAndTheLoadIsStillStored() async throws {
        let tiers = try ResilientTiers()
        let options = LoadOptions(hardTimeout: .seconds(2))
        let loader = HeldLoader()
        let cache = tiers.cache
        let call = Task {
            try await cache.value(forKey: "k", expiry: .seconds(10), options: options) {
                try await loader.hold()
                return bytes("v2")
            }
        }
        try await loader.waitUntilHeld()
        await tiers.clock.waitForSleepers(count: 1)
        tiers.clock.advance(by: 2)

        let error = await #expect(throws: CacheError.self) { try await call.value }
        #expect(error?.code == .loadTimedOut)
        #expect(try await tiers.plain("k") == (nil, nil))
        loader.release()
        try await tiers.events.wait(for: .loadFinished, count: 1)
        #expect(try await tiers.plain("k") == (bytes("v2"), bytes("v2")))
        #expect(tiers.cache.statistics.loads == 1)
    }

    @Test func aTimedOutLoadFencedByARemovalIsNotStored() async throws {
        let tiers = try ResilientTiers()
        let options = LoadOptions(hardTimeout: .seconds(2))
        let loader = HeldLoader()
        let cache = tiers.cache
        let call = Task {
            try await cache.value(forKey: "k", expiry: .seconds(10), options: options) {
                try await loader.hold()
                return bytes("v2")
            }
        }
        try await loader.waitUntilHeld()
        await tiers.clock.waitForSleepers(count: 1)
        tiers.clock.advance(by: 2)
        await #expect(throws: CacheError.self) { try await call.value }

        try await tiers.cache.removeEntry(forKey: "k")
        loader.release()
        try await tiers.events.wait(for: .loadFinished, count: 1)
        #expect(try await tiers.held("k") == (nil, nil))
    }

    @Test func aHardTimeoutUnderFailSafeServesTheStaleValue() async throws {
        let tiers = try ResilientTiers()
        try await seed(tiers)
        tiers.clock.advance(by: 15)
        let options = LoadOptions(failSafe: .init(maximumStaleness: .seconds(60)), hardTimeout: .seconds(2))
        let loader = HeldLoader()
        let cache = tiers.cache
        let call = Task {
            try await cache.value(forKey: "k", expiry: .seconds(10), options: options) {
                try await loader.hold()
                return bytes("v2")
            }
        }
        try await loader.waitUntilHeld()
        await tiers.clock.waitForSleepers(count: 1)
        tiers.clock.advance(by: 2)
        #expect(try await call.value == bytes("v1"))
        loader.release()
        try await tiers.events.wait(for: .loadFinished, count: 2)
    }

    @Test func aConcreteMemoryFirstTierTakesTheFastPathAndStillRefreshesAhead() async throws {
        let clock = ManualClock()
        let memory = try MemoryCache<String, Data>(clock: clock)
        let cache = try MultiCache<String, Data>(tiers: [.init(memory, name: "memory")])
        let events = CoordinatorEventLog()
        cache.coordinator.observe(events.observer)
        let options = LoadOptions(refreshAhead: 0.5, hardTimeout: .seconds(1))
        let runs = Counter()
        let load: @Sendable () async throws -> Data = {
            bytes("v\(runs.increment())")
        }
        #expect(
            try await cache.value(forKey: "k", expiry: .seconds(100), options: options, orLoad: load) == bytes("v1"))
        clock.advance(by: 40)
        #expect(
            try await cache.value(forKey: "k", expiry: .seconds(100), options: options, orLoad: load) == bytes("v1"))
        #expect(runs.value == 1)
        clock.advance(by: 20)
        #expect(
            try await cache.value(forKey: "k", expiry: .seconds(100), options: options, orLoad: load) == bytes("v1"))
        try await events.wait(for: .loadFinished, count: 2)
        #expect(runs.value == 2)
        #expect(memory.value(forKey: "k") == bytes("v2"))
        // Invalid options are refused on a hit too
        await #expect(throws: CacheError.self) {
            _ = try await cache.value(forKey: "k", options: LoadOptions(softTimeout: .zero), orLoad: load)
        }
    }
}

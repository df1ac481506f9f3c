import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import StrataTestSupport
import Testing

@testable import MultiCache

/// Time as MultiCache judges it above its tiers: a write-back carries the entry's remaining lifetime (capped by
/// a tier's maximum lifetime, never replaced by it), and each window of a load (fail-safe, stale while
/// revalidate, expiry itself) ends at its instant, tested where a tier's own retention would not hide it: the
/// entries here are retained stale for an hour, far past every window.
@Suite(.timeLimit(.minutes(10)))
struct MultiCacheLifetimeTests {
    struct Failure: Error {}

    let clock = ManualClock()
    let fast: MemoryCache<String, String>
    let slow: MemoryCache<String, String>

    init() throws {
        fast = try MemoryCache(clock: clock)
        slow = try MemoryCache(clock: clock)
    }

    func makeCache(fastMaximumLifetime: Duration? = nil) throws -> MultiCache<String, String> {
        try MultiCache(
            tiers: [.init(fast, name: "fast", maximumLifetime: fastMaximumLifetime), .init(slow, name: "slow")],
            clock: clock)
    }

    /// Stores "old" in both tiers, expiring at `expiresAt` and retained stale for an hour after.
    func storeOld(in cache: MultiCache<String, String>, expiresAt: Date) async throws {
        try await cache.setEntry(
            CacheEntry(value: "old", expiresAt: expiresAt, staleUntil: expiresAt.addingTimeInterval(3_600)),
            forKey: "k")
    }

    @Test(arguments: [nil, Duration.seconds(60)])
    func aWriteBackKeepsTheEntrysRemainingLifetime(cap: Duration?) async throws {
        // Given an entry only in the slow tier, expiring 30 s from now
        let cache = try makeCache(fastMaximumLifetime: cap)
        let expiresAt = clock.now.addingTimeInterval(30)
        try slow.setValue("v", forKey: "k", expiry: .at(expiresAt))

        // When it is read 20 s later, which writes it back into the fast tier
        clock.advance(by: 20)
        #expect(try await cache.value(forKey: "k") == "v")

        // Then the copy expires when the original does: not a fresh lifetime, not the cap
        #expect(fast.entry(forKey: "k")?.expiresAt == expiresAt)
        clock.set(to: expiresAt)
        #expect(try await cache.value(forKey: "k") == nil)
    }

    @Test func aWriteBackIsCappedByTheTiersMaximumLifetime() async throws {
        // Given an entry in the slow tier that lives 1,000 s, and a fast tier that keeps copies 60 s at most
        let cache = try makeCache(fastMaximumLifetime: .seconds(60))
        try slow.setValue("v", forKey: "k", expiry: .seconds(1_000))

        // When it is read 20 s later
        clock.advance(by: 20)
        #expect(try await cache.value(forKey: "k") == "v")

        // Then the fast copy ends 60 s after the write-back
        #expect(fast.entry(forKey: "k")?.expiresAt == clock.now.addingTimeInterval(60))
    }

    @Test func anEntryAtItsExpiryIsLoadedAgainNotServed() async throws {
        // Given an entry retained stale for an hour, read exactly at its expiry with fail-safe on
        let cache = try makeCache()
        let expiresAt = clock.now.addingTimeInterval(10)
        try await storeOld(in: cache, expiresAt: expiresAt)
        clock.set(to: expiresAt)

        // When a load with fail-safe asks for it
        let options = LoadOptions(failSafe: .init(maximumStaleness: .seconds(60)))
        let value = try await cache.value(forKey: "k", options: options) { "new" }

        // Then it counted as expired: the loader ran and its value was returned
        #expect(value == "new")
    }

    @Test func failSafeServesAStaleValueOnlyBeforeItsMaximumStaleness() async throws {
        // Given an entry that expired, retained stale for an hour, and fail-safe for 10 s of staleness
        let cache = try makeCache()
        let expiresAt = clock.now.addingTimeInterval(10)
        try await storeOld(in: cache, expiresAt: expiresAt)
        let options = LoadOptions(failSafe: .init(maximumStaleness: .seconds(10), throttle: .seconds(60)))
        let calls = Counter()
        let failing: @Sendable () async throws -> String = {
            calls.increment()
            throw Failure()
        }

        // When the loader fails 5 s after the expiry, then again (still throttled) exactly 10 s after it
        clock.set(to: expiresAt.addingTimeInterval(5))
        let inside = try await cache.value(forKey: "k", options: options, orLoad: failing)
        clock.set(to: expiresAt.addingTimeInterval(10))
        await #expect(throws: Failure.self) { try await cache.value(forKey: "k", options: options, orLoad: failing) }

        // Then the stale value covered the first failure only, and the throttle did not skip the second load
        #expect(inside == "old")
        #expect(calls.value == 2)
    }

    @Test func staleWhileRevalidateEndsAtItsGrace() async throws {
        // Given an entry that expired exactly 10 s ago, retained stale for an hour, with a grace of 10 s
        let cache = try makeCache()
        let expiresAt = clock.now.addingTimeInterval(10)
        try await storeOld(in: cache, expiresAt: expiresAt)
        clock.set(to: expiresAt.addingTimeInterval(10))

        // When it is asked for
        let value = try await cache.value(forKey: "k", options: LoadOptions(staleWhileRevalidate: .seconds(10))) {
            "new"
        }

        // Then the grace is over: the caller waits for the load instead of getting the stale value
        #expect(value == "new")
    }
}

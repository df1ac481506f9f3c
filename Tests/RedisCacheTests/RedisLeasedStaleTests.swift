import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import MultiCache
import StrataTestSupport
import Testing

@testable import RedisCache

/// A fail-safe caller that holds a stale value serves it at once while another process holds the key's lease
/// (issue 27, part 3), through a `MultiCache` and through a `RedisCache` alone; without a stale value, or with
/// the lease free, the load path is unchanged. The entry is made stale by stepping an injected clock; the
/// server keeps it for the hour of stale retention.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote), .serialized, .timeLimit(.minutes(10)))
struct RedisLeasedStaleTests {
    static let failSafe = LoadOptions(failSafe: .init(maximumStaleness: .seconds(3_600)))

    /// Two instances on one namespace and one clock: the holder of the lease, and the caller.
    struct Pair {
        let clock = ManualClock()
        let holder: RedisCache<String, String>
        let redis: RedisCache<String, String>
        let multi: MultiCache<String, String>

        /// Stores "old" for `staleKey` through the holder, expiring in 10 seconds and kept stale for an hour,
        /// steps past its expiry, and only then makes the caller's instances.
        // In that order because the caller's `MultiCache` listens to tracking: a message for the holder's
        // write that reached it after the caller's read had begun (a starved tracking thread, seen in CI)
        // would fence the caller's load, rightly, and its value would not be stored. Tracking that comes on
        // after the write sends no message for it, and the load waits until tracking is on.
        init(_ server: RedisServer, staleKey: String) async throws {
            var configuration = try RedisTier.configuration(
                port: server.port, namespace: RedisTier.namespace(), masterKey: RedisTier.randomMasterKey())
            configuration.clock = clock
            // A short wait: a caller that waited (the feature broken) loads for itself after it, and fails the
            // test in seconds rather than at its time limit; a caller that serves stale never waits at all.
            configuration.loadLease = .init(duration: .seconds(3_600), maximumWait: .seconds(2))
            holder = try RedisCache(configuration: configuration)
            let now = clock.now
            try await holder.setEntry(
                CacheEntry(value: "old", expiresAt: now + 10, staleUntil: now + 3_600), forKey: staleKey)
            clock.advance(by: 30)
            redis = try RedisCache(configuration: configuration)
            multi = try MultiCache(tiers: [.init(try MemoryCache(clock: clock)), .init(redis)])
        }
    }

    /// Counts the loader's runs.
    final class Runs: Sendable {
        private let count = Locked(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    enum Caller: String, CaseIterable, Sendable {
        case multiCache, redisCacheAlone
    }

    /// Loads `key` with fail-safe through `caller`'s cache.
    static func load(
        _ key: String, by caller: Caller, in pair: Pair, _ runs: Runs
    ) async throws -> String {
        let loader: @Sendable () async throws -> String = {
            runs.add()
            return "loaded here"
        }
        switch caller {
        case .multiCache: return try await pair.multi.value(forKey: key, options: failSafe, orLoad: loader)
        case .redisCacheAlone: return try await pair.redis.value(forKey: key, options: failSafe, orLoad: loader)
        }
    }

    @Test(arguments: Caller.allCases)
    func aFailSafeCallerServesItsStaleValueWhileAnotherProcessHoldsTheLease(_ caller: Caller) async throws {
        // Given "k" stale (within fail-safe's hour) and another process holding its lease, mid-load
        let server = try RedisServer()
        let pair = try await Pair(server, staleKey: "k")
        guard case .acquired(let lease) = try await pair.holder.acquireLease(forKey: "k", duration: .seconds(3_600))
        else {
            Issue.record("the first lease on a fresh key was not granted")
            return
        }
        // When a fail-safe caller misses it
        let runs = Runs()
        // Then it gets the stale value at once: it neither loads nor waits for the holder
        #expect(try await Self.load("k", by: caller, in: pair, runs) == "old")
        #expect(runs.value == 0)
        #expect(pair.redis.leaseTurns.servedStale == 1)
        #expect(pair.redis.leaseTurns.waited == 0)

        // And once the holder stores its value and gives the lease up, the caller gets that value, still
        // without loading
        try await pair.holder.setValue("new", forKey: "k", expiry: .seconds(600))
        #expect(try await pair.holder.releaseLease(lease))
        #expect(try await Self.load("k", by: caller, in: pair, runs) == "new")
        #expect(runs.value == 0)
    }

    @Test(arguments: Caller.allCases)
    func aFailSafeCallerLoadsWhenNoProcessHoldsTheLease(_ caller: Caller) async throws {
        // Given "k" stale and no lease on it
        let server = try RedisServer()
        let pair = try await Pair(server, staleKey: "k")
        // When a fail-safe caller misses it, then it loads (and takes the lease to do so), as before
        let runs = Runs()
        #expect(try await Self.load("k", by: caller, in: pair, runs) == "loaded here")
        #expect(runs.value == 1)
        #expect(pair.redis.leaseTurns.servedStale == 0)
        #expect(pair.redis.leaseTurns.held == 1)
        #expect(try await pair.holder.value(forKey: "k") == "loaded here")
    }

    @Test func aTurnTakesTheLeaseOverAnEntryThatIsOnlyStale() async throws {
        // Given "k" on the server but stale (kept for fail-safe)
        let server = try RedisServer()
        let pair = try await Pair(server, staleKey: "k")
        // When a process asks for its turn to load it, then the stale entry does not pass for a landed value:
        // it takes the lease and loads
        guard case .load(let release) = await pair.redis.loadTurn(forKey: "k") else {
            Issue.record("a stale entry was served as another process's load")
            return
        }
        #expect(pair.redis.leaseTurns.held == 1)
        #expect(pair.redis.leaseTurns.landed == 0)
        release()
    }
}

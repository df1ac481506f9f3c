import CacheCore
import DiskCache
import Foundation
import MemoryCache
import MultiCache
import StrataTestSupport
import Testing

@testable import RedisCache

/// Issue 27's fence figure over a real server: a `MultiCache([memory, disk, redis])` with tracking on
/// (the default) that serves at once, and one that warms up right after its own tag removal, runs each
/// loader once per key, and every loaded value reaches every tier. Before the fix, the tracking
/// connection's first "everything" and the echo of the cache's own tag `INCR` fenced the first loads:
/// their values were stored in no tier and the next caller loaded again.
// Serialized: each round starts tracking threads; one at a time keeps two cores from starving the run.
@Suite(.serialized, .enabled(if: RedisServer.suitesRun, RedisServer.skipNote), .timeLimit(.minutes(10)))
struct RedisLoadOnceStartTests {
    static let keys = (0..<100).map { "k\($0)" }
    static let rounds = 10

    /// Loader runs per key.
    final class LoadCounts: Sendable {
        private let counts = Locked([String: Int]())
        func count(_ key: String) { counts.withLock { $0[key, default: 0] += 1 } }
        var all: [String: Int] { counts.withLock { $0 } }
    }

    /// One fresh `MultiCache([memory, disk, redis])` on its own namespace, and the invalidations it applied.
    final class Stack: Sendable {
        let memory: MemoryCache<String, Data>
        let disk: DiskCache<String, Data>
        let redis: RedisCache<String, Data>
        let multi: MultiCache<String, Data>
        /// The namespace read without tracking: what Redis holds, untouched by this stack.
        let reader: RedisCache<String, Data>
        let log = AppliedLog()
        private let folder = TemporaryFolder(label: "redis-load-once-start")

        /// A stack on a namespace some process used before (its epoch counter exists), as a restarted server
        /// finds it: the first use of a namespace creates the counter, and its echo is an "everything" this
        /// process cannot tell from another's `removeAll()` (Docs/RedisCache.md, "Fences at start").
        static func onUsedNamespace(port: Int) async throws -> Stack {
            let namespace = RedisTier.namespace()
            let masterKey = RedisTier.randomMasterKey()
            var untracked = try RedisTier.configuration(port: port, namespace: namespace, masterKey: masterKey)
            untracked.tracksInvalidations = false
            let earlier = try RedisCache<String, Data>(configuration: untracked)
            try await earlier.setValue(Data("earlier".utf8), forKey: "earlier")
            await earlier.close()
            return try Stack(port: port, namespace: namespace, masterKey: masterKey)
        }

        init(port: Int, namespace: String, masterKey: Data) throws {
            memory = try MemoryCache(countLimit: 10_000)
            disk = try DiskCache(
                configuration: DiskCacheConfiguration(
                    name: "start", directory: folder.url, masterKeySource: .masterKey(RedisTier.randomMasterKey())))
            redis = try RedisCache(
                configuration: RedisTier.configuration(port: port, namespace: namespace, masterKey: masterKey))
            var untracked = try RedisTier.configuration(port: port, namespace: namespace, masterKey: masterKey)
            untracked.tracksInvalidations = false
            reader = try RedisCache(configuration: untracked)
            multi = try MultiCache([memory, disk, redis])
            multi.observeAppliedInvalidations { [log] in log.record($0) }
        }

        func close() async {
            await redis.close()
            await reader.close()
        }

        static func value(of key: String, round: Int) -> Data { Data("\(key)@\(round)".utf8) }

        /// Loads every key at once through `multi`, each loader counted; returns once all have answered.
        func loadAll(round: Int, tags: Set<String>, counts: LoadCounts) async throws {
            try await withThrowingTaskGroup(of: (String, Data).self) { group in
                for key in RedisLoadOnceStartTests.keys {
                    group.addTask {
                        let load: @Sendable () async throws -> Data = {
                            counts.count(key)
                            return Self.value(of: key, round: round)
                        }
                        let value =
                            tags.isEmpty
                            ? try await self.multi.value(forKey: key, expiry: .hours(1), orLoad: load)
                            : try await self.multi.value(forKey: key, expiry: .hours(1), tags: tags, orLoad: load)
                        return (key, value)
                    }
                }
                for try await (key, value) in group {
                    #expect(value == Self.value(of: key, round: round), "round \(round), \(key)")
                }
            }
        }

        /// Waits until every write the server executed so far came back through tracking and was applied:
        /// a marker written last comes back after every earlier push.
        func settle() async -> Bool {
            for _ in 0..<10 {
                let marker = "marker-\(UUID().uuidString)"
                // A write that misses its deadline on a loaded machine is tried again with another marker.
                guard (try? await redis.setValue(Data("m".utf8), forKey: marker)) != nil else { continue }
                let event = await log.next { event in
                    switch event {
                    case .keys(let keys): return keys.contains(marker)
                    case .all: return true
                    case .tags: return false
                    }
                }
                guard let event else { return false }
                if case .keys = event { return true }
            }
            return false
        }

        /// Checks that every key's value reached every tier: the tiers above counted a store per key, Redis
        /// holds every value, and a copy missing above was dropped by the echo of this stack's own `SET` of
        /// it (own writes come back through tracking: Docs/RedisCache.md), never by a fence.
        func expectStoredEverywhere(
            round: Int, memoryStoresBefore: Int, diskStoresBefore: Int, trackingLossesBefore: Int
        ) async throws {
            let keys = RedisLoadOnceStartTests.keys
            #expect(memory.statistics.insertions - memoryStoresBefore == keys.count, "round \(round): memory stores")
            #expect(disk.statistics.insertions - diskStoresBefore == keys.count, "round \(round): disk stores")
            var missingInRedis = 0
            for key in keys where try await reader.value(forKey: key) != Self.value(of: key, round: round) {
                missingInRedis += 1
            }
            #expect(missingInRedis == 0, "round \(round): values missing in Redis")
            // A tracking connection lost on a loaded machine (its keep-alive missed) is a genuine flush of the
            // tiers above: the copies there are then rightly gone, and nothing is left to compare.
            if redis.health.trackingLosses > trackingLossesBefore {
                print("round \(round): tracking was lost and restored; the tiers above were flushed, not compared")
                return
            }
            // The stores above are counted already; telling an echo of our own write from a fence needs every
            // push delivered, which a loaded machine may delay past the wait: then nothing is compared above.
            guard await settle() else {
                print("round \(round): tracking's pushes did not settle in time; the tiers above were not compared")
                return
            }
            var echoed: Set<String> = []
            for case .keys(let keys) in log.events { echoed.formUnion(keys) }
            var missingAbove = 0
            for key in keys where !echoed.contains(key) {
                if memory.value(forKey: key) != Self.value(of: key, round: round) { missingAbove += 1 }
                if try await disk.value(forKey: key) != Self.value(of: key, round: round) { missingAbove += 1 }
            }
            #expect(missingAbove == 0, "round \(round): copies above missing without an echo of their own write")
        }
    }

    /// Asks for every key twice: all at once, then again once all answered; returns the loader runs per key.
    static func twice(_ stack: Stack, round: Int, tags: Set<String> = []) async throws -> [String: Int] {
        let counts = LoadCounts()
        let memoryStores = stack.memory.statistics.insertions
        let diskStores = stack.disk.statistics.insertions
        let trackingLosses = stack.redis.health.trackingLosses
        try await stack.loadAll(round: round, tags: tags, counts: counts)
        try await stack.expectStoredEverywhere(
            round: round, memoryStoresBefore: memoryStores, diskStoresBefore: diskStores,
            trackingLossesBefore: trackingLosses)
        try await stack.loadAll(round: round, tags: tags, counts: counts)
        return counts.all
    }

    /// The runs per key, summarized: how many keys ran their loader n times.
    static func histogram(_ counts: [String: Int]) -> [Int: Int] {
        var histogram: [Int: Int] = [:]
        for key in keys { histogram[counts[key] ?? 0, default: 0] += 1 }
        return histogram
    }

    @Test func aFreshCacheServingAtOnceRunsEachLoaderOnceAndStoresEveryValueInEveryTier() async throws {
        let server = try RedisServer()
        var summary: [Int: Int] = [:]
        for round in 0..<Self.rounds {
            let stack = try await Stack.onUsedNamespace(port: server.port)
            // No wait for tracking: the cache serves the moment it exists.
            let counts = try await Self.twice(stack, round: round)
            let histogram = Self.histogram(counts)
            summary.merge(histogram, uniquingKeysWith: +)
            #expect(histogram == [1: Self.keys.count], "round \(round): loader runs per key → keys")
            await stack.close()
        }
        let runs = summary.sorted { $0.key < $1.key }
        print("fresh cache, loader runs per key → keys over \(Self.rounds) rounds: \(runs)")
    }

    @Test func aWarmUpRightAfterTheCachesOwnTagRemovalRunsEachLoaderOnce() async throws {
        let server = try RedisServer()
        var summary: [Int: Int] = [:]
        for round in 0..<Self.rounds {
            let stack = try await Stack.onUsedNamespace(port: server.port)
            // Tracking on and its first flush applied (a load waits for both), and the load's own write back
            // through tracking: what follows is the tag removal's echo alone.
            _ = try await stack.multi.value(forKey: "ready", expiry: .hours(1)) { Data("ready".utf8) }
            #expect(await stack.settle(), "round \(round): tracking settles")
            try await stack.multi.removeAll(taggedWith: "warm")
            let counts = try await Self.twice(stack, round: round, tags: ["warm"])
            let histogram = Self.histogram(counts)
            summary.merge(histogram, uniquingKeysWith: +)
            #expect(histogram == [1: Self.keys.count], "round \(round): loader runs per key → keys")
            await stack.close()
        }
        let runs = summary.sorted { $0.key < $1.key }
        print("warm-up after own tag removal, loader runs per key → keys over \(Self.rounds) rounds: \(runs)")
    }
}

import CacheCore
import Foundation
import Testing

@testable import RedisCache
@testable import RedisConnection

/// Issue 25, "coherence per primary": with a cluster's map in use, the tier listens on every primary, and a
/// primary's lost tracking connection flushes only the keys of that primary's slots — everything only when
/// that primary holds the namespace's counters. Three standalone servers stand in for the primaries of a map
/// the test puts in use (tracking works the same on a standalone server and a cluster node), so a primary can
/// be killed without disturbing the shared cluster.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisScopedInvalidationTests {
    @Test func aLostPrimaryFlushesOnlyItsSlotsKeysAndTheCountersPrimaryFlushesEverything() async throws {
        // Given three servers, a map that splits the slots between them, and the server of the slot of the
        // namespace's counters
        let servers = try (0..<3).map { _ in try RedisServer() }
        let cache = try RedisCache<String, Data>(configuration: try RedisTier.configuration(port: servers[0].port))
        let ranges = [0...5_460, 5_461...10_922, 10_923...16_383]
        let topology = try ClusterTopology(
            shards: zip(ranges, servers).map { range, server in
                ClusterTopology.Shard(
                    slots: [range], primary: .init(address: .init(host: "127.0.0.1", port: server.port)))
            })
        let countersSlot = HashSlot(key: cache.keys.epochKey).rawValue
        let counters = try #require(ranges.firstIndex { $0.contains(countersSlot) })
        let other = (counters + 1) % 3
        // And an observer, the map in use, and 60 keys this process used
        let received = Locked<[CacheInvalidation<String>]>([])
        let subscription = cache.addInvalidationObserver { invalidation in received.withLock { $0.append(invalidation) }
        }
        cache.invalidations.follow(topology)
        let keys = (0..<60).map { "key-\($0)" }
        var keysOfOther: Set<String> = []
        for key in keys {
            let name = try cache.entryName(Data(key.utf8))
            cache.invalidations.track(name, for: key)
            if ranges[other].contains(HashSlot(key: name).rawValue) { keysOfOther.insert(key) }
        }
        #expect(!keysOfOther.isEmpty && keysOfOther.count < keys.count)
        let tracking = await RedisTesting.waitAsync(timeout: .seconds(30)) {
            cache.invalidations.trackingNodes.count == 3
        }
        #expect(tracking)
        #expect(cache.health.isTracking)
        received.withLock { $0 = [] }

        // When a primary without the counters dies
        servers[other].kill9()
        let flushed = await RedisTesting.waitAsync(timeout: .seconds(30)) { !received.withLock(\.isEmpty) }
        // Then only its slots' keys are flushed, and tracking is reported off
        #expect(flushed)
        guard case .keys(let flushedKeys)? = received.withLock(\.first) else {
            Issue.record("expected a flush of one primary's keys, got \(received.withLock { $0 })")
            return
        }
        #expect(Set(flushedKeys) == keysOfOther)
        #expect(!cache.health.isTracking)
        #expect(cache.invalidations.snapshot.counters.scopedInvalidations >= 1)
        received.withLock { $0 = [] }

        // When the primary of the counters dies, then everything is flushed
        servers[counters].kill9()
        let all = await RedisTesting.waitAsync(timeout: .seconds(30)) {
            received.withLock { $0.contains { if case .all = $0 { true } else { false } } }
        }
        #expect(all)
        subscription.cancel()
        await cache.close()
        withExtendedLifetime(servers) {}
    }
}

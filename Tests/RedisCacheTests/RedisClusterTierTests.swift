import CacheCore
import CacheTesting
import Foundation
import Testing

@testable import RedisCache
@testable import RedisConnection

/// Issue 25, "the tier on a cluster": RedisCache pointed at any one node of the real loopback cluster finds the
/// cluster and serves every key of every primary, with the shared contract, bulk reads, clears, tags and
/// coherence. Each test in its own namespace; nothing here changes the cluster's map.
@Suite(.enabled(if: RedisCluster.suitesRun, RedisServer.skipNote))
struct RedisClusterTierTests {
    /// A tier seeded with one node of the shared cluster (a replica by default: discovery from any role).
    static func tier(
        _ cluster: RedisCluster, seed: Int = 3, namespace: String = RedisTier.namespace(), masterKey: Data? = nil,
        clock: any CacheClock = SystemClock()
    ) throws -> RedisCache<String, Data> {
        var configuration = try RedisTier.configuration(
            port: cluster.ports[seed], namespace: namespace, masterKey: masterKey, clock: clock)
        configuration.serverTimeToLivePadding = .seconds(3600)
        return try RedisCache<String, Data>(configuration: configuration)
    }

    /// Two instances of one fresh namespace and master key, seeded with the shared cluster's nodes `first` and
    /// `second` (two processes sharing a namespace, as far as the server can tell).
    static func instances(
        seeds first: Int, _ second: Int
    ) async throws -> (RedisCache<String, Data>, RedisCache<String, Data>) {
        let cluster = try await RedisCluster.shared()
        let namespace = RedisTier.namespace()
        let masterKey = RedisTier.randomMasterKey()
        return (
            try tier(cluster, seed: first, namespace: namespace, masterKey: masterKey),
            try tier(cluster, seed: second, namespace: namespace, masterKey: masterKey)
        )
    }

    /// The primary that serves `key`'s entry in `cache`'s namespace.
    static func primary(of key: String, in cache: RedisCache<String, Data>) throws -> Int? {
        let name = try cache.entryName(Data(key.utf8))
        return cache.route.cluster?.topology?.primary(for: HashSlot(key: name))?.port
    }

    @Test(arguments: CacheContract.Check.allCases)
    func contract(_ check: CacheContract.Check) async throws {
        let cluster = try await RedisCluster.shared()
        try await CacheContract.verify(check) { clock in try Self.tier(cluster, clock: clock) }
    }

    @Test func keysOfEveryPrimaryAreWrittenAndReadThroughOneReplicaSeed() async throws {
        // Given a tier that knows one replica of the cluster only
        let cluster = try await RedisCluster.shared()
        let cache = try Self.tier(cluster)
        // When 200 keys are written, read one by one and read in bulk
        let keys = (0..<200).map { "key-\($0)" }
        for key in keys { try await cache.setValue(Data("value of \(key)".utf8), forKey: key, expiry: .hours(1)) }
        var single: [String: Data] = [:]
        for key in keys { single[key] = try await cache.value(forKey: key) }
        let bulk = try await cache.entries(forKeys: keys)
        // Then every value comes back both ways, the tier found the cluster, and the keys used all three primaries
        let expected = Dictionary(uniqueKeysWithValues: keys.map { ($0, Data("value of \($0)".utf8)) })
        #expect(single == expected)
        #expect(bulk.mapValues(\.value) == expected)
        #expect(cache.route.cluster != nil)
        let primaries = Set(try keys.compactMap { try Self.primary(of: $0, in: cache) })
        #expect(primaries == Set(cluster.ports[0..<3]))
        #expect(cache.statistics.hits == 400)
        await cache.close()
    }

    @Test func aRequestFailedByTheBreakerTheRefusalOpenedStillFindsTheCluster() async throws {
        // Given a tier whose standalone connection has met a cluster node's refusal until its breaker opened
        let cluster = try await RedisCluster.shared()
        let cache = try Self.tier(cluster)
        var failures: [ConnectionError] = []
        for _ in 0..<10 where failures.last?.code != .unavailable {
            do {
                _ = try await cache.route.pool.primary.send(RESPCommand("PING"))
            } catch let error as ConnectionError {
                failures.append(error)
            }
        }
        #expect(failures.first == .clusterNodeRefused)
        #expect(failures.last?.code == .unavailable)
        // Then a failure the open breaker gives is taken for the cluster node it is, as the refusal itself is
        #expect(cache.route.isClusterNode(ConnectionError(.unavailable, "the breaker is open")))
        #expect(cache.route.isClusterNode(ConnectionError.clusterNodeRefused))
        // And a write goes through the cluster
        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .hours(1))
        #expect(try await cache.value(forKey: "k") == Data("v".utf8))
        #expect(cache.health.isCluster)
        await cache.close()
    }

    @Test func aStandaloneServersFailuresAreNotTakenForACluster() async throws {
        // Given a tier on a standalone server that has answered
        let server = try RedisServer()
        let cache = try RedisCache<String, Data>(configuration: try RedisTier.configuration(port: server.port))
        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .hours(1))
        // Then its failures stay failures, and the tier stays standalone
        #expect(!cache.route.isClusterNode(ConnectionError(.unavailable, "the breaker is open")))
        #expect(cache.route.cluster == nil)
        #expect(!cache.health.isCluster)
        await cache.close()
    }

    @Test func removeAllAndATagsRemovalReachKeysOfEveryPrimaryForEveryInstance() async throws {
        // Given two instances of one namespace, keys on every primary, half of them tagged "t"
        let (writer, reader) = try await Self.instances(seeds: 0, 4)
        let keys = (0..<60).map { "key-\($0)" }
        for (index, key) in keys.enumerated() {
            let tags: Set<String> = index.isMultiple(of: 2) ? ["t"] : []
            try await writer.setEntry(
                CacheEntry(value: Data(key.utf8), expiresAt: Date().addingTimeInterval(3600), tags: tags), forKey: key)
        }
        #expect(try await reader.entries(forKeys: keys).count == 60)
        // When the writer removes the tag, then the other instance misses exactly the tagged keys
        try await writer.removeAll(taggedWith: "t")
        let afterTag = try await reader.entries(forKeys: keys)
        #expect(Set(afterTag.keys) == Set(keys.enumerated().filter { !$0.offset.isMultiple(of: 2) }.map(\.element)))
        // When the writer clears the namespace, then the other instance misses every key, one by one too
        try await writer.removeAll()
        #expect(try await reader.entries(forKeys: keys).isEmpty)
        for key in keys { #expect(try await reader.value(forKey: key) == nil) }
        await writer.close()
        await reader.close()
    }

    @Test func aWriteInOneInstanceInvalidatesTheKeyInAnotherOnEveryPrimary() async throws {
        // Given an observing instance that has read keys of every primary, with tracking on every primary
        let cluster = try await RedisCluster.shared()
        let (writer, observer) = try await Self.instances(seeds: 1, 5)
        let received = Locked<[String]>([])
        let subscription = observer.addInvalidationObserver { invalidation in
            if case .keys(let keys) = invalidation { received.withLock { $0 += keys } }
        }
        let keys = (0..<30).map { "key-\($0)" }
        for key in keys { #expect(try await observer.value(forKey: key) == nil) }
        let tracking = await RedisTesting.waitAsync(timeout: .seconds(30)) { observer.health.isTracking }
        #expect(tracking)
        let primaries = Set(try keys.compactMap { try Self.primary(of: $0, in: observer) })
        #expect(primaries == Set(cluster.ports[0..<3]))
        // When the other instance writes each key
        for key in keys { try await writer.setValue(Data("new".utf8), forKey: key, expiry: .hours(1)) }
        // Then the observer is told of every key, whichever primary holds it
        let told = await RedisTesting.waitAsync(timeout: .seconds(30)) {
            Set(received.withLock { $0 }).isSuperset(of: keys)
        }
        #expect(told)
        subscription.cancel()
        await writer.close()
        await observer.close()
    }

    @Test func purgeRemovesOlderEpochsOnEveryPrimary() async throws {
        // Given 60 entries on every primary, sealed before a clear, and 6 written after it
        let cluster = try await RedisCluster.shared()
        let cache = try Self.tier(cluster)
        for index in 0..<60 { try await cache.setValue(Data("old".utf8), forKey: "old-\(index)", expiry: .hours(1)) }
        try await cache.removeAll()
        for index in 0..<6 { try await cache.setValue(Data("new".utf8), forKey: "new-\(index)", expiry: .hours(1)) }
        // When the older epochs are purged, then the 60 go (from every primary) and the 6 stay
        #expect(try await cache.purgeOldEpochs() == 60)
        #expect(try await cache.entries(forKeys: (0..<6).map { "new-\($0)" }).count == 6)
        #expect(try await cache.purgeOldEpochs() == 0)
        await cache.close()
    }
}

import CacheCore
import Foundation
import Testing

@testable import RedisCache
@testable import RedisConnection

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// Issue 25, "fences that survive failover", on the tier: the namespace's epoch advanced by a `removeAll()` that
/// never reached the replica, the primary killed, the replica taken over — the counter went back. No instance
/// that saw the clear serves an entry from before it, and the fence was not reported as replicated. A cluster
/// of its own: the takeover changes the map the other suites route by.
@Suite(.serialized, .enabled(if: RedisCluster.suitesRun, RedisServer.skipNote), .timeLimit(.minutes(10)))
struct RedisClusterCounterRegressionTests {
    @Test func aClearLostToATakeoverServesNothingFromBeforeIt() async throws {
        // Given a cluster, two instances of one namespace, and 30 entries on every primary, replicated
        let cluster = try await RedisCluster()
        defer { cluster.stop() }
        let namespace = RedisTier.namespace()
        let masterKey = RedisTier.randomMasterKey()
        let make = { (seed: Int) throws -> RedisCache<String, Data> in
            var configuration = try RedisTier.configuration(
                port: cluster.ports[seed], namespace: namespace, masterKey: masterKey)
            configuration.serverTimeToLivePadding = .seconds(3600)
            return try RedisCache<String, Data>(configuration: configuration)
        }
        let writer = try make(1)
        let reader = try make(2)
        let keys = (0..<90).map { "entry-\($0)" }
        for key in keys { try await writer.setValue(Data(key.utf8), forKey: key, expiry: .hours(1)) }
        #expect(try await reader.entries(forKeys: keys).count == keys.count)
        let topology = try #require(writer.route.cluster?.topology)
        for primary in topology.primaries {
            let node = try RedisCluster.connection(port: primary.port)
            #expect(try await node.send(RESPCommand("WAIT", "1", "10000")) == .integer(1))
            await node.close()
        }
        let shard = try #require(topology.shard(for: HashSlot(key: writer.keys.epochKey)))
        let replica = try #require(shard.replicas.first?.address)
        let primaryServer = try #require(cluster.nodes.first { $0.port == shard.primary.address.port })
        let replicaServer = try #require(cluster.nodes.first { $0.port == replica.port })

        // When the counters' replica stops and its link is cut (a stopped replica still reads what sits in its
        // socket once resumed: the link must be gone before the advance), the writer clears the namespace (the
        // advance reaches the primary only), the reader sees the clear, then the primary dies and the replica
        // takes over
        replicaServer.signal(SIGSTOP)
        let primary = try RedisCluster.connection(port: shard.primary.address.port)
        #expect(try await primary.send(RESPCommand("CLIENT", "KILL", "TYPE", "replica")) == .integer(1))
        await primary.close()
        try await writer.removeAll()
        let cleared = writer.state.withLock { $0.epoch }
        // (no replica was connected to confirm it: the fence is not counted as confirmed)
        #expect(writer.health.confirmedFences == 0)
        #expect(try await reader.entries(forKeys: keys).isEmpty)
        primaryServer.kill9()
        replicaServer.signal(SIGCONT)
        let takeover = try RedisCluster.connection(port: replica.port)
        #expect(try await takeover.send(RESPCommand("CLUSTER", "FAILOVER", "TAKEOVER")) == .simpleString("OK"))
        await takeover.close()
        try await ClusterFailoverTests.waitUntilPrimary(port: replica.port, timeout: .seconds(60))
        let counter = try RedisCluster.connection(port: replica.port)
        let regressed = try await counter.send(RESPCommand(arguments: [Array("GET".utf8), writer.keys.epochKey]))
        await counter.close()

        // Then the counter did go back, and neither instance serves any entry from before the clear, one by one or
        // in bulk (each read retried only while the cluster's map still names the dead primary)
        #expect(try RedisCache<String, Data>.counterValue(regressed).map { $0 < cleared } == true)
        for cache in [reader, writer] {
            let bulk = try await Self.settled { try await cache.entries(forKeys: keys) }
            #expect(bulk.count == 0)
            for key in keys {
                #expect(try await Self.settled { try await cache.value(forKey: key) } == nil)
            }
        }
        await writer.close()
        await reader.close()
    }

    /// `body`, retried every 50 ms for at most 60 s while it fails: the first reads after a takeover may still
    /// go to the dead primary until the map is read again. A wrong value is never retried away: only failures.
    static func settled<Result>(_ body: () async throws -> Result) async throws -> Result {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            do {
                return try await body()
            } catch  where ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }
}

import CacheCore
import Foundation
import Testing

@testable import RedisCache
@testable import RedisConnection

/// Issue 25's soak: 20 manual failovers and 5 reshards, one after another, under the 64-task load through one
/// `RedisCache`. Asserted: the load and every step end (no hang), no caller sees an error, no value is
/// wrong but for the one loss inside Redis that ``RedisClusterFaultTests`` excuses, and once the tier is
/// closed this process holds no socket to the cluster. How long it took is printed, never asserted. A
/// cluster of its own.
@Suite(.serialized, .enabled(if: RedisCluster.suitesRun, RedisServer.skipNote), .timeLimit(.minutes(10)))
struct RedisClusterSoakTests {
    static let failovers = 20
    static let reshards = 5
    static let slotsPerReshard = 500

    @Test func twentyFailoversAndFiveReshardsUnderLoadLeaveNoErrorAndNoSocket() async throws {
        // Given a cluster, no socket of this process to it, a tier with deadlines that outlast a failover,
        // and the load on keys of every primary
        let cluster = try await RedisCluster()
        defer { cluster.stop() }
        #expect(Descriptors.sockets(toPorts: cluster.ports) == 0)
        let cache = try RedisClusterFaultTests.tier(cluster, deadline: .seconds(12))
        let load = try await RedisClusterFaultTests.load(on: cache)
        let shards = try RedisClusterFaultTests.shards(of: cache)
        try await RedisClusterFaultTests.waitUntilReplicated(cluster)
        let stop = Locked(false)
        defer { stop.withLock { $0 = true } }
        let running = Task { await load.run { stop.withLock { $0 } } }

        // When every fifth step reshards 500 slots from one primary to the next, and the others ask a
        // replica to take over, round the shards
        let started = ContinuousClock.now
        var rounds: [RedisClusterFaultTests.FailoverRound] = []
        var resharded = 0
        for step in 0..<(Self.failovers + Self.reshards) {
            try await RedisClusterFaultTests.waitUntilReplicated(cluster)
            if step % 5 == 4 {
                try await Self.reshard(cluster, round: resharded)
                resharded += 1
                continue
            }
            let replicas = try await RedisClusterFaultTests.replicas(cluster)
            let replica = replicas[rounds.count % replicas.count]
            let asked = ContinuousClock.now
            let requests = try await RedisClusterFaultTests.failOver(to: replica)
            let promoted = ContinuousClock.now
            try await RedisClusterFaultTests.waitUntilAllOK(cluster)
            rounds.append(
                .init(
                    shard: shards[replica] ?? -1, window: asked...promoted, settled: ContinuousClock.now,
                    requests: requests))
        }
        let took = ContinuousClock.now - started
        let underLoad = Descriptors.sockets(toPorts: cluster.ports)
        stop.withLock { $0 = true }
        let record = await running.value

        // Then every step and the load ended, no caller saw an error, and no value was wrong but for a write
        // lost inside Redis by a failover that outlasted its limit (see RedisClusterFaultTests)
        #expect(rounds.count == Self.failovers && resharded == Self.reshards)
        let failures = record.failureCounts
        #expect(failures.isEmpty, "\(failures)")
        let outlasting = rounds.filter(\.outlastedTheLimit)
        let (explained, unexplained) = RedisClusterFaultTests.split(record.wrongValues) { wrong in
            outlasting.contains { $0.shard == shards[wrong.port] && $0.window.overlaps(wrong) }
        }
        #expect(unexplained.isEmpty, "\(unexplained.prefix(10))")
        // And closing the tier leaves no socket to the cluster (the map reads' and the failed-over nodes'
        // connections included)
        let statistics = cache.route.cluster?.statistics
        await cache.close()
        let closed = await RedisTesting.waitAsync(timeout: .seconds(30)) {
            Descriptors.sockets(toPorts: cluster.ports) == 0
        }
        #expect(closed, "\(Descriptors.sockets(toPorts: cluster.ports)) sockets left")
        print(
            "RedisClusterSoakTests: \(Self.failovers) failovers and \(Self.reshards) reshards of "
                + "\(Self.slotsPerReshard) slots in \(took); \(record.samples.count) operations, failures "
                + "\(failures.count), wrong values \(record.wrongValues.count) (\(explained.count) explained by "
                + "an outlasting failover); sockets to the cluster \(underLoad) under load, "
                + "\(Descriptors.sockets(toPorts: cluster.ports)) after close; \(String(describing: statistics))")
    }

    /// Moves 500 slots from one primary to the next (by port, turning with `round`), once every node
    /// reports ok: failovers change which nodes are primaries.
    static func reshard(_ cluster: RedisCluster, round: Int) async throws {
        try await RedisClusterFaultTests.waitUntilAllOK(cluster)
        let replicas = try await RedisClusterFaultTests.replicas(cluster)
        let primaries = cluster.ports.filter { !replicas.contains($0) }.sorted()
        try await RedisClusterReshardTests.reshard(
            slotsPerReshard, from: primaries[round % primaries.count], to: primaries[(round + 1) % primaries.count])
    }
}

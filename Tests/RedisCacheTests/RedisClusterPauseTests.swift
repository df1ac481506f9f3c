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

/// Issue 25's `kill -STOP` figure for the tier: one primary stops answering (its socket stays open, so
/// nothing but a deadline ends a request on it) while 64 tasks read and write through one `RedisCache`, and
/// its replica is told not to take over. Asserted: every operation ends, none on another primary fails, the
/// stopped node is not stormed with connections or the cluster with map reads, and its slots are served
/// again once it resumes. Timings are printed, never asserted. A cluster of its own: the test reconfigures it.
@Suite(.serialized, .enabled(if: RedisCluster.suitesRun, RedisServer.skipNote), .timeLimit(.minutes(10)))
struct RedisClusterPauseTests {
    @Test func aStoppedPrimaryFailsOnlyItsOperationsEachByItsDeadlineWithoutARetryStorm() async throws {
        // Given a cluster that keeps serving the slots it covers while a primary is stopped, whose replica of
        // that primary waits to be told before it takes over, a tier with 2 s read and write deadlines, and the
        // load on keys of every primary
        let cluster = try await RedisCluster()
        defer { cluster.stop() }
        let cache = try RedisClusterFaultTests.tier(cluster, deadline: .seconds(2))
        let load = try await RedisClusterFaultTests.load(on: cache)
        let topology = try #require(cache.route.cluster?.topology)
        let deadline = try #require(cache.route.cluster?.configuration.operationTimeout)
        // (a victim that does not serve the namespace's counters: with those stopped every read waits on them)
        let counters = topology.primary(for: HashSlot(key: cache.keys.epochKey))
        let victimShard = try #require(topology.shards.first { $0.primary.address != counters })
        let victim = victimShard.primary.address
        let replica = try #require(victimShard.replicas.first?.address)
        try await ClusterFailoverTests.configure(
            topology.primaries + [replica], "cluster-require-full-coverage", "no")
        try await ClusterFailoverTests.configure([replica], "cluster-replica-no-failover", "yes")
        let victimServer = try #require(cluster.nodes.first { $0.port == victim.port })
        let stop = Locked(false)
        defer {
            stop.withLock { $0 = true }
            victimServer.signal(SIGCONT)
        }
        let running = Task { await load.run { stop.withLock { $0 } } }
        let warm = await load.wait(timeout: .seconds(120)) { progress in
            Set(progress.successes.filter { $0.value >= 100 }.keys).count == 3
        }
        #expect(warm)

        // When the victim is stopped until the other primaries have served 500 operations each after two of
        // the victim's deadlines have passed (its first requests have ended by then, the rest fail at once)
        for port in cluster.ports { try await RedisClusterReshardTests.send(["CONFIG", "RESETSTAT"], toPort: port) }
        let before = cache.route.cluster?.nodeStatistics[victim] ?? .init()
        victimServer.signal(SIGSTOP)
        let stopped = ContinuousClock.now
        try await Task.sleep(for: deadline * 2)
        load.progress.withLock { $0.mark(ContinuousClock.now) }
        let othersOn = await load.wait(timeout: .seconds(120)) { progress in
            Set(progress.successesSinceMark.filter { $0.key != victim.port && $0.value >= 500 }.keys).count == 2
        }
        #expect(othersOn)
        let during = cache.route.cluster?.nodeStatistics[victim] ?? .init()
        let mapReads = try await RedisClusterReshardTests.mapReads(on: cluster.ports.filter { $0 != victim.port })
        // And then it resumes, and the load runs until its slots have served 100 operations again
        victimServer.signal(SIGCONT)
        let resumed = ContinuousClock.now
        // (the connections it queued while stopped are accepted now: the tier's, this one, and the few the
        // tier makes as it resumes)
        let stats = try await RedisClusterReshardTests.send(["INFO", "stats"], toPort: victim.port).string ?? ""
        let connections =
            stats.split(whereSeparator: \.isNewline)
            .first { $0.hasPrefix("total_connections_received:") }
            .flatMap { Int($0.split(separator: ":").last ?? "") } ?? -1
        load.progress.withLock { $0.mark(resumed) }
        let servedAgain = await load.wait(timeout: .seconds(120)) {
            $0.successesSinceMark[victim.port, default: 0] >= 100
        }
        #expect(servedAgain)
        stop.withLock { $0 = true }
        let record = await running.value

        // Then no operation on another primary failed, and no value was wrong
        let others = record.samples.filter { $0.port != victim.port }
        #expect(others.compactMap(\.failure).isEmpty, "\(Set(others.compactMap(\.failure)))")
        #expect(record.wrongValues.isEmpty, "\(record.wrongValues.prefix(10))")
        // And every operation on the victim's slots while it was stopped failed and ended (the load returned),
        // none later than its deadline by more than a loaded machine's scheduling delay
        let paused = record.samples.filter { $0.port == victim.port && $0.start >= stopped && $0.end < resumed }
        #expect(!paused.isEmpty)
        #expect(paused.allSatisfy { $0.failure != nil })
        // (each failure names the stopped node, not the healthy one the tier was configured with)
        let named = "node 127.0.0.1:\(victim.port):"
        #expect(paused.allSatisfy { $0.failure?.contains(named) == true }, "\(paused.first?.failure ?? "")")
        // (the machine's own delay is the slowest operation on a healthy primary in the same run: the whole
        // suite on CI's 2 cores once held a stopped primary's operation 10.5 s against its 4 s deadline while the
        // healthy primaries' p99 was 900 ms)
        let longest = paused.map(\.duration).quantile(1)
        let slowestHealthy = others.map(\.duration).quantile(1)
        #expect(
            longest < deadline + .seconds(3) + slowestHealthy,
            "the longest took \(longest) against a deadline of \(deadline); the slowest healthy one \(slowestHealthy)")
        // And no retry storm: the breaker opened and refused operations without a request (how many depends
        // on how fast the tasks come back, so only that it did); the victim was asked for a connection at most
        // twice a second (its data and tracking connections each retry at most once per backoff ceiling of
        // 1 s) and the cluster for at most one map read per 100 ms
        let rejected = during.rejectedWhileOpen - before.rejectedWhileOpen
        let pausedFor = resumed - stopped
        #expect(during.breakerOpenings > before.breakerOpenings)
        #expect(rejected > 0)
        #expect(connections >= 0)
        #expect(Double(connections) <= 10 + 2 * (pausedFor / .seconds(1)), "\(connections) in \(pausedFor)")
        #expect(Double(mapReads) <= 1 + pausedFor / .milliseconds(100), "\(mapReads) map reads in \(pausedFor)")
        let firstServed = record.samples.filter { $0.port == victim.port && $0.failure == nil && $0.start >= resumed }
            .map(\.end).min()
        print(
            "RedisClusterPauseTests: \(victim.port) stopped for \(pausedFor); its operations while stopped "
                + "\(paused.count) (refused at once by the breaker \(rejected)), longest \(longest) (deadline "
                + "\(deadline)), failures \(Dictionary(paused.compactMap(\.failure).map { ($0, 1) }, uniquingKeysWith: +)); "
                + "connections asked of it \(connections); map reads \(mapReads); other primaries \(others.count) operations, p99 "
                + "\(others.map(\.duration).quantile(0.99).milliseconds) ms; first success after SIGCONT "
                + "\(firstServed.map { $0 - resumed } ?? .zero)")
        await cache.close()
    }
}

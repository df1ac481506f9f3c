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

/// Issue 25's fault figures for the tier: 64 tasks read and write through one `RedisCache` while the cluster
/// fails over, loses a primary to `kill -9`, or another instance writes. The assertions are counts (errors
/// surfaced, wrong values, invalidations missed); the timings are printed for Docs/RedisCache.md, never
/// asserted. A cluster of its own per test: every fault changes the map.
@Suite(.serialized, .enabled(if: RedisCluster.suitesRun, RedisServer.skipNote), .timeLimit(.minutes(10)))
struct RedisClusterFaultTests {
    static let tasks = 64
    static let keysPerTask = 8

    @Test func twentyManualFailoversUnderLoadSurfaceNoErrorAndNoWrongValue() async throws {
        // Given a cluster, a tier seeded with one node, and a load of 64 tasks on keys of every primary; the
        // deadlines outlast the old primary's pause of writes: until its replica has taken over, or 10 s
        // (twice the 5 s manual failover limit) when the cluster abandons a failover — seen on a loaded machine
        let cluster = try await RedisCluster()
        defer { cluster.stop() }
        let cache = try Self.tier(cluster, deadline: .seconds(12))
        let load = try await Self.load(on: cache)
        let shards = try Self.shards(of: cache)
        try await Self.waitUntilReplicated(cluster)
        let stop = Locked(false)
        let running = Task { await load.run { stop.withLock { $0 } } }

        // When a replica is told to take over (`CLUSTER FAILOVER`), twenty times, round the shards
        var rounds: [FailoverRound] = []
        for round in 0..<20 {
            try await Self.waitUntilReplicated(cluster)
            let replicas = try await Self.replicas(cluster)
            let replica = replicas[round % replicas.count]
            let started = ContinuousClock.now
            let requests = try await Self.failOver(to: replica)
            let promoted = ContinuousClock.now
            try await Self.waitUntilAllOK(cluster)
            rounds.append(
                FailoverRound(
                    shard: shards[replica] ?? -1, window: started...promoted, settled: ContinuousClock.now,
                    requests: requests))
        }
        stop.withLock { $0 = true }
        let record = await running.value

        // Then no caller saw an error
        let failures = record.failureCounts
        let outlasting = rounds.filter(\.outlastedTheLimit)
        let (explained, unexplained) = Self.split(record.wrongValues) { wrong in
            outlasting.contains { $0.shard == shards[wrong.port] && $0.window.overlaps(wrong) }
        }
        let durations = rounds.map { $0.settled - $0.window.lowerBound }
        print(
            "RedisClusterFaultTests: 20 failovers, \(record.samples.count) operations, failures \(failures), "
                + "wrong values \(record.wrongValues.count) (\(explained.count) explained by an outlasting "
                + "failover); failover took p50 \(durations.quantile(0.5)), max \(durations.quantile(1)), "
                + "\(rounds.map(\.requests).reduce(0, +)) requests, \(outlasting.count) outlasted the 5 s limit")
        if !explained.isEmpty { print("RedisClusterFaultTests: explained: \(explained.prefix(10))") }
        #expect(failures.isEmpty, "\(failures)")
        #expect(record.samples.count > 20 * Self.tasks)
        // And no value was wrong, but for one loss inside Redis: a failover that outlasted the cluster's 5 s
        // limit ends the old primary's pause, so it acknowledges writes its replica never gets, and when the
        // replica's election still goes through, they are gone. A read is excused only when it returned an
        // older value of its own key whose every later acknowledged write overlapped such a failover of that
        // key's shard; a value of another key, one never written, or a loss anywhere else is the tier's fault
        #expect(unexplained.isEmpty, "\(unexplained.prefix(10))")
        await cache.close()
    }

    @Test func aKilledPrimaryFailsOnlyItsSlotsAndItsReplicaServesThem() async throws {
        // Given a cluster that keeps serving the slots it covers while a primary is lost, a tier, and the
        // load on keys of every primary
        let cluster = try await RedisCluster()
        defer { cluster.stop() }
        let cache = try Self.tier(cluster)
        let load = try await Self.load(on: cache)
        let topology = try #require(cache.route.cluster?.topology)
        try await Self.waitUntilReplicated(cluster)
        try await ClusterFailoverTests.configure(
            cluster.ports.map { .init(host: "127.0.0.1", port: $0) }, "cluster-require-full-coverage", "no")
        // And a victim that does not serve the namespace's counters (with those gone every read fails closed)
        let counters = topology.primary(for: HashSlot(key: cache.keys.epochKey))
        let victimShard = try #require(topology.shards.first { $0.primary.address != counters })
        let victim = victimShard.primary.address.port
        let replica = try #require(victimShard.replicas.first?.address.port)
        let victimServer = try #require(cluster.nodes.first { $0.port == victim })
        let stop = Locked(false)
        let running = Task { await load.run { stop.withLock { $0 } } }

        // When the load has served 100 operations on every primary, the victim is killed, and the cluster
        // promotes its replica
        let warm = await load.wait(timeout: .seconds(120)) { progress in
            Set(progress.successes.filter { $0.value >= 100 }.keys).count == 3
        }
        #expect(warm)
        let killed = ContinuousClock.now
        victimServer.kill9()
        try await ClusterFailoverTests.waitUntilPrimary(port: replica, timeout: .seconds(60))
        let reportedOK = ContinuousClock.now
        // And the load has served the victim's slots again, and 100 more operations on every other primary
        // that started at least 1 s after the promotion (the window of the other shards' figure ends there)
        load.progress.withLock { $0.mark(reportedOK) }
        let servedAgain = await load.wait(timeout: .seconds(120)) { $0.successesSinceMark[victim, default: 0] > 0 }
        #expect(servedAgain)
        load.progress.withLock { $0.mark(max(ContinuousClock.now, reportedOK + .seconds(1))) }
        let othersOn = await load.wait(timeout: .seconds(120)) { progress in
            Set(progress.successesSinceMark.filter { $0.key != victim && $0.value >= 100 }.keys).count == 2
        }
        #expect(othersOn)
        stop.withLock { $0 = true }
        let record = await running.value

        // Then no other shard's operation failed, no value was wrong, and the victim's slots are served again
        let others = record.samples.filter { $0.port != victim }
        let mine = record.samples.filter { $0.port == victim }
        let otherFailures = others.compactMap(\.failure)
        #expect(otherFailures.isEmpty, "\(Set(otherFailures))")
        // (but for writes the victim acknowledged and had not yet sent its replica when it was killed: an older
        // value of a key of its shard, whose every later acknowledged write started before the kill)
        let (explained, unexplained) = Self.split(record.wrongValues) { wrong in
            wrong.port == victim && (wrong.lostWrites ?? []).allSatisfy { $0.lowerBound < killed }
        }
        #expect(unexplained.isEmpty, "\(unexplained.prefix(10))")
        let firstServed = mine.filter { $0.failure == nil && $0.end >= reportedOK }.map(\.end).min()
        #expect(firstServed != nil)
        // And every operation on the victim's slots ended (the figure against its deadline is printed)
        let deadline = cache.route.cluster?.configuration.operationTimeout ?? .zero
        let baseline = others.filter { $0.end < killed }.map(\.duration)
        let during = others.filter { $0.start >= killed && $0.start < reportedOK + .seconds(1) }.map(\.duration)
        let mineDuring = mine.filter { $0.start >= killed && $0.start < reportedOK }
        print(
            "RedisClusterFaultTests: kill -9 of \(victim); promoted after \(reportedOK - killed); "
                + "victim's slots: \(mineDuring.count) operations while down, failures "
                + "\(Dictionary(mineDuring.compactMap(\.failure).map { ($0, 1) }, uniquingKeysWith: +)), longest "
                + "\(mineDuring.map(\.duration).quantile(1)) (deadline \(deadline)); first success "
                + "\(firstServed.map { $0 - reportedOK } ?? .zero) after cluster_state:ok; other shards p99 "
                + "\(baseline.quantile(0.99).milliseconds) ms before, \(during.quantile(0.99).milliseconds) ms "
                + "from the kill to 1 s after ok (\(during.count) operations), failures \(otherFailures.count); "
                + "\(record.samples.count) operations, wrong values \(record.wrongValues.count) "
                + "(\(explained.count) explained by the kill)")
        await cache.close()
    }

    @Test func aWriteInOneInstanceReachesTheOtherForKeysOfEveryPrimary() async throws {
        // Given a writer and an observer with tracking on every primary, and keys of every primary the
        // observer has read
        let cluster = try await RedisCluster()
        defer { cluster.stop() }
        let namespace = RedisTier.namespace()
        let masterKey = RedisTier.randomMasterKey()
        let writer = try Self.tier(cluster, seed: 0, namespace: namespace, masterKey: masterKey)
        let observer = try Self.tier(cluster, seed: 4, namespace: namespace, masterKey: masterKey)
        let arrivals = Locked<[String: ContinuousClock.Instant]>([:])
        let subscription = observer.addInvalidationObserver { invalidation in
            guard case .keys(let keys) = invalidation else { return }
            let now = ContinuousClock.now
            arrivals.withLock { for key in keys where $0[key] == nil { $0[key] = now } }
        }
        let keys = (0..<300).map { "key-\($0)" }
        for key in keys { #expect(try await observer.value(forKey: key) == nil) }
        let tracking = await RedisTesting.waitAsync(timeout: .seconds(30)) { observer.health.isTracking }
        #expect(tracking)
        let ports = try Dictionary(uniqueKeysWithValues: keys.map { ($0, try Self.primary(of: $0, in: observer)) })
        #expect(Set(ports.values) == Set(cluster.ports[0..<3]))
        arrivals.withLock { $0 = [:] }

        // When the writer sets each key in turn
        var delays: [Int: [Duration]] = [:]
        var missed = 0
        for key in keys {
            let started = ContinuousClock.now
            try await writer.setValue(Data("new".utf8), forKey: key, expiry: .hours(1))
            let told = await RedisTesting.waitAsync(timeout: .seconds(10)) { arrivals.withLock { $0[key] != nil } }
            if let arrival = arrivals.withLock({ $0[key] }), told {
                delays[ports[key] ?? 0, default: []].append(arrival - started)
            } else {
                missed += 1
            }
        }

        // Then the observer was told of every key, whichever primary holds it
        #expect(missed == 0)
        let figures = delays.sorted { $0.key < $1.key }.map { port, values in
            "\(port): n \(values.count) p50 \(values.quantile(0.5).milliseconds) ms "
                + "p99 \(values.quantile(0.99).milliseconds) ms"
        }
        print("RedisClusterFaultTests: invalidation delay from set to observer, \(figures.joined(separator: "; "))")
        subscription.cancel()
        await writer.close()
        await observer.close()
    }

    /// One failover asked for: the shard it changed, from the first request to the replica answering as a
    /// primary, when every node reported ok again, and how many requests it took.
    struct FailoverRound {
        var shard: Int
        var window: ClosedRange<ContinuousClock.Instant>
        var settled: ContinuousClock.Instant
        var requests: Int

        /// Whether the old primary may have ended its pause of writes before its replica took over: the
        /// cluster's manual failover limit is 5 s from the old primary's receipt of the request.
        var outlastedTheLimit: Bool { requests > 1 || window.upperBound - window.lowerBound >= .seconds(5) }
    }

    /// `wrongValues` split into those `excused` excuses — only an older value of the key's own, whose every
    /// later acknowledged write is one a loss inside Redis could take — and the rest.
    static func split(
        _ wrongValues: [TierLoad.WrongValue], excused: (TierLoad.WrongValue) -> Bool
    ) -> (explained: [TierLoad.WrongValue], unexplained: [TierLoad.WrongValue]) {
        var explained: [TierLoad.WrongValue] = []
        var unexplained: [TierLoad.WrongValue] = []
        for wrong in wrongValues {
            if let lost = wrong.lostWrites, !lost.isEmpty, excused(wrong) {
                explained.append(wrong)
            } else {
                unexplained.append(wrong)
            }
        }
        return (explained, unexplained)
    }

    /// Port → the index of its shard in `cache`'s map, for every primary and replica.
    static func shards(of cache: RedisCache<String, Data>) throws -> [Int: Int] {
        let topology = try #require(cache.route.cluster?.topology)
        var shards: [Int: Int] = [:]
        for (index, shard) in topology.shards.enumerated() {
            shards[shard.primary.address.port] = index
            for replica in shard.replicas { shards[replica.address.port] = index }
        }
        return shards
    }

    /// A tier seeded with node `seed` of `cluster`, with the suites' loose deadlines, or `deadline` for reads
    /// and writes.
    static func tier(
        _ cluster: RedisCluster, seed: Int = 3, namespace: String = RedisTier.namespace(), masterKey: Data? = nil,
        deadline: Duration? = nil
    ) throws -> RedisCache<String, Data> {
        var configuration = try RedisTier.configuration(
            port: cluster.ports[seed], namespace: namespace, masterKey: masterKey)
        configuration.serverTimeToLivePadding = .seconds(3600)
        if let deadline {
            configuration.readTimeout = deadline
            configuration.writeTimeout = deadline
        }
        return try RedisCache<String, Data>(configuration: configuration)
    }

    /// The port of the primary that serves `key`'s entry in `cache`'s namespace, by the tier's map.
    static func primary(of key: String, in cache: RedisCache<String, Data>) throws -> Int {
        let name = try cache.entryName(Data(key.utf8))
        return try #require(cache.route.cluster?.topology?.primary(for: HashSlot(key: name))?.port)
    }

    /// The load's keys on `cache`, after a write that makes the tier find the cluster and read its map.
    static func load(on cache: RedisCache<String, Data>) async throws -> TierLoad {
        try await cache.setValue(Data("first".utf8), forKey: "first", expiry: .hours(1))
        let keys = (0..<tasks).map { task in (0..<keysPerTask).map { "task-\(task)-key-\($0)" } }
        var ports: [String: Int] = [:]
        for key in keys.joined() { ports[key] = try primary(of: key, in: cache) }
        #expect(Set(ports.values).count == 3)
        return TierLoad(cache: cache, keys: keys, ports: ports)
    }

    /// Sends `CLUSTER FAILOVER` to the replica on `port` until it is a primary, again every 10 s (at most 12
    /// times, a guard against a hang): a manual
    /// failover the cluster has not finished within its own 5 s limit is abandoned by the nodes, not retried.
    ///
    /// - Returns: How many requests it took.
    static func failOver(to port: Int) async throws -> Int {
        for request in 1...12 {
            let node = try RedisCluster.connection(port: port)
            let reply = try await node.send(RESPCommand("CLUSTER", "FAILOVER"))
            await node.close()
            #expect(reply == .simpleString("OK"))
            do {
                try await ClusterFailoverTests.waitUntilPrimary(port: port, timeout: .seconds(10))
                return request
            } catch is RedisCluster.NotReady where request < 12 {
                continue
            }
        }
        throw RedisCluster.NotReady(description: "the replica on \(port) did not take over after 12 requests")
    }

    /// Waits until every primary's replica has its data (`WAIT 1` on each): a replica still waiting for its
    /// first sync (diskless, after a 5 s delay by default) can neither take a manual failover nor be elected.
    static func waitUntilReplicated(_ cluster: RedisCluster) async throws {
        let replicas = try await replicas(cluster)
        for port in cluster.ports where !replicas.contains(port) {
            let node = try RedisCluster.connection(port: port)
            var reply = try await node.send(RESPCommand("WAIT", "1", "1000"))
            for _ in 0..<120 where reply != .integer(1) {
                reply = try await node.send(RESPCommand("WAIT", "1", "1000"))
            }
            await node.close()
            #expect(reply == .integer(1))
        }
    }

    /// The ports of the nodes that are replicas now, by `ROLE`, in port order.
    static func replicas(_ cluster: RedisCluster) async throws -> [Int] {
        var replicas: [Int] = []
        for port in cluster.ports.sorted() {
            let node = try RedisCluster.connection(port: port)
            let role = try? await node.send(RESPCommand("ROLE"))
            await node.close()
            if case .array(let fields)? = role, fields.first?.string == "slave" { replicas.append(port) }
        }
        return replicas
    }

    /// Polls every node every 20 ms until each reports `cluster_state:ok` and three replicas answer `ROLE` as
    /// such (the demoted primary has turned replica).
    static func waitUntilAllOK(_ cluster: RedisCluster) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        var lastSeen = ""
        while ContinuousClock.now < deadline {
            let replicas = try await replicas(cluster)
            var ok = replicas.count == 3
            var states = ["replicas \(replicas)"]
            for port in cluster.ports where ok {
                let node = try RedisCluster.connection(port: port)
                let info = (try? await node.send(RESPCommand("CLUSTER", "INFO")))?.string ?? ""
                await node.close()
                ok = info.contains("cluster_state:ok")
                let state = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("cluster_state:") }
                states.append("\(port) \(state ?? "no reply")")
            }
            if ok { return }
            lastSeen = states.joined(separator: ", ")
            try await Task.sleep(for: .milliseconds(20))
        }
        // The replicas and the nodes asked last time, up to the first not ok: where a cluster that never
        // settles stuck.
        throw RedisCluster.NotReady(
            description: "the cluster did not settle within 60 s of a failover; last seen: \(lastSeen)")
    }
}

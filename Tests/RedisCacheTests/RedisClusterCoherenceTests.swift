import CacheCore
import Foundation
import MultiCache
import StrataTestSupport
import Testing

@testable import RedisCache
@testable import RedisConnection

/// Issue 25's coherence under topology change: a writer instance and an observer `MultiCache([memory,
/// redis])` share a namespace on a cluster of their own, and 1,000 randomized trials interleave a write, the
/// observer's read, and now and then a migration of the key's slot to another primary or a manual failover
/// of its shard. After each write the observer must serve the new value once its memory tier has been told,
/// and must never keep serving the old one: a trial whose old value outlives the 10 s bound (counted from the
/// trial's last step) is a stale read. The delay from that step to the observer serving the new value is
/// printed, never asserted. `STRATA_COHERENCE_TRIALS` sets the number of trials (at least 10: ten of them,
/// evenly spaced, are failovers).
@Suite(.serialized, .enabled(if: RedisCluster.suitesRun, RedisServer.skipNote), .timeLimit(.minutes(15)))
struct RedisClusterCoherenceTests {
    static let trials = max(
        10, ProcessInfo.processInfo.environment["STRATA_COHERENCE_TRIALS"].flatMap(Int.init) ?? 1_000)
    static let failovers = 10
    static let keys = (0..<12).map { "coherence-\($0)" }

    enum Fault: Hashable { case none, migration, failover }

    @Test func writesInterleavedWithMigrationsAndFailoversLeaveNoStaleValueInAnotherInstance() async throws {
        // Given a writer and an observer with tracking on every primary, deadlines that outlast a failover,
        // and keys the observer's memory tier holds
        let cluster = try await RedisCluster()
        defer { cluster.stop() }
        let namespace = RedisTier.namespace()
        let masterKey = RedisTier.randomMasterKey()
        var configuration = try RedisTier.configuration(
            port: cluster.ports[0], namespace: namespace, masterKey: masterKey)
        configuration.readTimeout = .seconds(12)
        configuration.writeTimeout = .seconds(12)
        let writer = try RedisCache<String, String>(configuration: configuration)
        let observer = try InvalidationStack(port: cluster.ports[4], namespace: namespace, masterKey: masterKey) {
            $0.readTimeout = .seconds(12)
            $0.writeTimeout = .seconds(12)
        }
        for key in Self.keys {
            try await writer.setValue("\(key)#0", forKey: key, expiry: .hours(1))
            #expect(try await observer.multi.value(forKey: key) == "\(key)#0")
        }
        #expect(await observer.waitUntilTracking())
        try await RedisClusterFaultTests.waitUntilReplicated(cluster)

        // When each trial writes a key, reads it in the observer, and moves its slot or fails its shard over
        // before the write, between the write and the read, or after both, in a random order
        var generator = SplitMix64(seed: 25)
        var faults: [Fault: Int] = [:]
        var stale: [String] = []
        var lost: [String] = []
        var epochLost: [String] = []
        var delays: [Duration] = []
        for trial in 1...Self.trials {
            let key = Self.keys[Int(generator.next() % UInt64(Self.keys.count))]
            let value = "\(key)#\(trial)"
            let fault: Fault =
                trial % (Self.trials / Self.failovers) == 0
                ? .failover : generator.next() % 10 == 0 ? .migration : .none
            let order = generator.next() % 3
            if order == 0 { try await Self.inject(fault, forKey: key, in: cluster, writer: writer) }
            try await writer.setValue(value, forKey: key, expiry: .hours(1))
            if order == 2 { _ = try? await observer.multi.value(forKey: key) }
            if order != 0 { try await Self.inject(fault, forKey: key, in: cluster, writer: writer) }
            faults[fault, default: 0] += 1
            // (from the last step's end: a failover after the write takes seconds of its own)
            let written = ContinuousClock.now
            // Then the observer serves the new value, within the bound
            var served: String?
            var failure: (any Error)?
            while ContinuousClock.now - written < .seconds(10) {
                do {
                    served = try await observer.multi.value(forKey: key)
                    failure = nil
                } catch {
                    (served, failure) = (nil, error)
                }
                if served == value { break }
                try await Task.sleep(for: .milliseconds(1))
            }
            if served == value {
                delays.append(ContinuousClock.now - written)
            } else {
                let seen = served ?? failure.map { "\($0)" } ?? "a miss"
                // What each instance makes of the key now, and why a read may miss (a cleared epoch, a corrupt
                // or expired entry), for the report
                let direct = await Self.describeRead { try await observer.redis.value(forKey: key) }
                let written = await Self.describeRead { try await writer.value(forKey: key) }
                let health = observer.redis.health
                let report =
                    "trial \(trial), \(fault), order \(order): \(key) served \(seen), wrote \(value); observer's "
                    + "Redis tier now \(direct), writer's \(written); observer corrupt \(health.corruptEntries), "
                    + "stale epoch \(health.staleEpochEntries), statistics \(observer.redis.statistics)"
                // A miss in both instances, with no entry of a cleared epoch or a corrupt one read: the cluster
                // itself lost the key (hand-made migrations and failovers can leave a stale claim on the slot
                // that wins, and the node that held the keys drops them). A cache may lose an entry; serving an
                // old value is what this test forbids.
                if served == nil, failure == nil, written == "a miss", health.corruptEntries == 0,
                    health.staleEpochEntries == 0
                {
                    lost.append(report)
                } else if served == nil, failure == nil, written == "a miss", health.staleEpochEntries > 0 {
                    // Both instances miss and the observer read the entry under no current epoch: the cluster
                    // lost the namespace's epoch counter in a failover (a promoted replica lacked it; Docs/
                    // RedisCache.md, "The namespace's epoch lost in a failover"). A loss, not a stale value.
                    epochLost.append(report)
                } else {
                    stale.append(report)
                }
                // (each stale trial waits out the bound: a few are enough to fail and to read)
                if stale.count == 5 { break }
            }
        }

        #expect(stale.isEmpty, "\(stale.prefix(10))")
        // Losses are the cluster's, not the tier's, and rare (none in most runs of 1,000 trials)
        #expect(lost.count <= 3, "\(lost)")
        if !lost.isEmpty { print("RedisClusterCoherenceTests: keys the cluster lost: \(lost)") }
        // Seen in a few runs in a hundred of 200 trials (once or twice a run): more than a few in a run is
        // another matter
        #expect(epochLost.count <= 3, "\(epochLost)")
        withKnownIssue("the namespace's epoch lost in a failover", isIntermittent: true) {
            #expect(epochLost.isEmpty, "\(epochLost)")
        }
        if stale.isEmpty {
            #expect(faults[.failover] == Self.failovers)
            #expect(faults[.migration, default: 0] > 0)
        }
        print(
            "RedisClusterCoherenceTests: \(Self.trials) trials (\(faults[.migration, default: 0]) migrations, "
                + "\(faults[.failover, default: 0]) failovers), stale \(stale.count); last step to the new value served, "
                + "p50 \(delays.quantile(0.5).milliseconds) ms, p99 \(delays.quantile(0.99).milliseconds) ms, "
                + "max \(delays.quantile(1).milliseconds) ms; scoped flushes "
                + "\(observer.redis.invalidations.snapshot.counters.scopedInvalidations)")
        await writer.close()
        await observer.redis.close()
    }

    /// What a read gave: its value, "a miss" or "an error: …".
    static func describeRead(_ read: () async throws -> String?) async -> String {
        do {
            return try await read() ?? "a miss"
        } catch {
            return "an error: \(error)"
        }
    }

    /// Moves `key`'s slot to another primary (`.migration`: its keys migrated while the slot is marked
    /// migrating and importing, then the slot given to the target on every primary), or asks its shard's
    /// replica to take over (`.failover`) and waits until the cluster has settled. Nodes are told apart by
    /// what each says of itself (`ROLE`, its own map), which gossip after a failover cannot leave behind.
    static func inject(
        _ fault: Fault, forKey key: String, in cluster: RedisCluster, writer: RedisCache<String, String>,
        attempt: Int = 0
    ) async throws {
        guard fault != .none else { return }
        let slot = HashSlot(key: try writer.entryName(Data(key.utf8)))
        try await waitUntilEveryNodeHasOneMap(cluster)
        let replicas = try await RedisClusterFaultTests.replicas(cluster)
        let primaries = cluster.ports.filter { !replicas.contains($0) }
        var owner: Int?
        for port in primaries where owner == nil {
            let reply = try await RedisClusterReshardTests.send(["CLUSTER", "SHARDS"], toPort: port)
            let view = try ClusterTopology(shardsReply: reply, queriedHost: "127.0.0.1")
            if view.primary(for: slot)?.port == port { owner = port }
        }
        let source = try #require(owner)
        switch fault {
        case .none:
            return
        case .failover:
            try await RedisClusterFaultTests.waitUntilReplicated(cluster)
            var replica: Int?
            for port in replicas where replica == nil {
                let role = try await RedisClusterReshardTests.send(["ROLE"], toPort: port)
                if case .array(let fields) = role, fields.count > 2, fields[2] == .integer(Int64(source)) {
                    replica = port
                }
            }
            _ = try await RedisClusterFaultTests.failOver(to: try #require(replica))
            try await RedisClusterFaultTests.waitUntilAllOK(cluster)
        case .migration:
            let target = try #require(primaries.first { $0 != source })
            do {
                try await migrate(slot, from: source, to: target, primaries: primaries)
            } catch let error as ConnectionError where error.code == .moved && attempt < 5 {
                // The source lost the slot between agreeing on the map and `MIGRATE` (CI saw `MIGRATE` answered
                // `MOVED` once, under the mutation gate's load): no key moved, so put the slot back to stable
                // on every node and move it again from whoever owns it once the nodes agree. A harness matter:
                // the tier follows either map.
                for port in cluster.ports {
                    _ = try? await RedisClusterReshardTests.send(
                        ["CLUSTER", "SETSLOT", String(slot.rawValue), "STABLE"], toPort: port)
                }
                try await Task.sleep(for: .milliseconds(100))
                try await inject(fault, forKey: key, in: cluster, writer: writer, attempt: attempt + 1)
            }
        }
    }

    /// `slot` moved from the primary on `source` to the one on `target`, as `redis-cli --cluster reshard`
    /// moves one slot.
    static func migrate(_ slot: HashSlot, from source: Int, to target: Int, primaries: [Int]) async throws {
        let number = String(slot.rawValue)
        let sourceID = try await RedisClusterReshardTests.send(["CLUSTER", "MYID"], toPort: source).string ?? ""
        let targetID = try await RedisClusterReshardTests.send(["CLUSTER", "MYID"], toPort: target).string ?? ""
        try await RedisClusterReshardTests.send(["CLUSTER", "SETSLOT", number, "IMPORTING", sourceID], toPort: target)
        try await RedisClusterReshardTests.send(["CLUSTER", "SETSLOT", number, "MIGRATING", targetID], toPort: source)
        while true {
            let reply = try await RedisClusterReshardTests.send(
                ["CLUSTER", "GETKEYSINSLOT", number, "100"], toPort: source)
            guard case .array(let names) = reply, !names.isEmpty else { break }
            let keys = names.compactMap(\.string)
            try await migrateOnce(
                ["MIGRATE", "127.0.0.1", String(target), "", "0", "5000", "REPLACE", "KEYS"] + keys, from: source)
        }
        for port in [target, source] + primaries.filter({ $0 != target && $0 != source }) {
            try await RedisClusterReshardTests.send(["CLUSTER", "SETSLOT", number, "NODE", targetID], toPort: port)
        }
    }

    /// Polls every node's `CLUSTER SHARDS` every 20 ms until all six name the same primary for every slot:
    /// after a failover, `cluster_state:ok` on every node comes before gossip has brought each node the new
    /// owner of every slot, and a migration begun on such a node meets `MOVED` or `CLUSTERDOWN`.
    static func waitUntilEveryNodeHasOneMap(_ cluster: RedisCluster) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            var maps: [[Int?]] = []
            for port in cluster.ports {
                let reply = try? await RedisClusterReshardTests.send(["CLUSTER", "SHARDS"], toPort: port)
                let view = reply.flatMap { try? ClusterTopology(shardsReply: $0, queriedHost: "127.0.0.1") }
                maps.append(RedisClusterReshardTests.allSlots.map { view?.primary(for: $0)?.port })
            }
            if let first = maps.first, !first.contains(nil), maps.allSatisfy({ $0 == first }) { return }
            guard ContinuousClock.now < deadline else {
                throw RedisCluster.NotReady(description: "the nodes' maps did not agree within 60 s")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// `MIGRATE` sent to `source`, again every 20 ms for up to 30 s while the target answers that the cluster
    /// is down: a node that has just seen a failover may say so for a moment after every node reported ok.
    private static func migrateOnce(_ command: [String], from source: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            do {
                try await RedisClusterReshardTests.send(command, toPort: source)
                return
            } catch let error as ConnectionError where error.message.contains("CLUSTERDOWN") {
                guard ContinuousClock.now < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}

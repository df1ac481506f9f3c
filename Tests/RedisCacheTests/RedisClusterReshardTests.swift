import CacheCore
import Foundation
import Testing

@testable import RedisCache
@testable import RedisConnection

/// Issue 25's reshard figure for the tier: `redis-cli --cluster reshard` moves 1,000 slots from one primary
/// to another while 64 tasks read and write through one `RedisCache`. The assertions are counts (errors
/// surfaced, wrong values, map reads asked of the nodes); the timings are printed, never asserted. A cluster
/// of its own: the reshard changes the map.
@Suite(.serialized, .enabled(if: RedisCluster.suitesRun, RedisServer.skipNote), .timeLimit(.minutes(10)))
struct RedisClusterReshardTests {
    static let slotsMoved = 1_000
    static let allSlots = (0..<16_384).compactMap(HashSlot.init(rawValue:))

    @Test func aReshardOfAThousandSlotsUnderLoadSurfacesNoErrorAndReadsTheMapSparingly() async throws {
        // Given a cluster, a tier seeded with one node, and the 64-task load on keys of every primary; the
        // tier's deadlines are hang guards of a minute: what this test counts is redirects followed, and under
        // ThreadSanitizer with the whole suite on 2 cores an operation took 33 s, past the default 10 s, which
        // surfaced the `MOVED` it was following as the caller's error
        let cluster = try await RedisCluster()
        defer { cluster.stop() }
        let cache = try RedisClusterFaultTests.tier(cluster, deadline: .seconds(60))
        let load = try await RedisClusterFaultTests.load(on: cache)
        let before = try #require(cache.route.cluster?.topology)
        let source = before.shards[0].primary.address.port
        let target = before.shards[1].primary.address.port
        let moving = Self.allSlots.filter { before.primary(for: $0)?.port == source }
        let stop = Locked(false)
        defer { stop.withLock { $0 = true } }
        let running = Task { await load.run { stop.withLock { $0 } } }
        let warm = await load.wait(timeout: .seconds(120)) { progress in
            Set(progress.successes.filter { $0.value >= 100 }.keys).count == 3
        }
        #expect(warm)

        // When 1,000 of the source's slots move to the target, as an operator reshards (every key of a slot
        // is migrated while the slot is marked migrating and importing, then the slot is given to the
        // target), and the load goes on until it has served 500 more operations
        for port in cluster.ports { try await Self.send(["CONFIG", "RESETSTAT"], toPort: port) }
        let statsReset = ContinuousClock.now
        let statisticsBefore = try #require(cache.route.cluster?.statistics)
        try await Self.reshard(Self.slotsMoved, from: source, to: target)
        let resharded = ContinuousClock.now
        load.progress.withLock { $0.mark(resharded) }
        let servedAfter = await load.wait(timeout: .seconds(120)) { $0.successesSinceMark.values.reduce(0, +) >= 500 }
        #expect(servedAfter)
        // (and until the tier's map names the cluster's primary for every slot, read once from the target:
        // a redirect put off by the refresh interval is read by the first command after it)
        let clusterMap = try ClusterTopology(
            shardsReply: try await Self.send(["CLUSTER", "SHARDS"], toPort: target), queriedHost: "127.0.0.1")
        let settled = await RedisTesting.waitAsync(timeout: .seconds(60)) {
            guard let map = cache.route.cluster?.topology else { return false }
            return Self.allSlots.allSatisfy { map.primary(for: $0) == clusterMap.primary(for: $0) }
        }
        stop.withLock { $0 = true }
        let record = await running.value

        // Then no caller saw an error and no value was wrong
        let failures = record.failureCounts
        #expect(failures.isEmpty, "\(failures)")
        #expect(record.wrongValues.isEmpty, "\(record.wrongValues.prefix(10))")
        // And the tier's map came to agree with the cluster's, 1,000 of the source's slots now the target's
        #expect(settled)
        let after = try #require(cache.route.cluster?.topology)
        #expect(moving.filter { after.primary(for: $0)?.port == target }.count == Self.slotsMoved)
        let statistics = try #require(cache.route.cluster?.statistics)
        #expect(statistics.movedRedirects > statisticsBefore.movedRedirects)
        // And the cluster was asked for its map at most once per 100 ms (every node's count of the two
        // commands that read it, so no read is missed whichever node it went to; less this test's own)
        let mapReads = try await Self.mapReads(on: cluster.ports) - 1
        let elapsed = ContinuousClock.now - statsReset
        #expect(Double(mapReads) <= 1 + elapsed / .milliseconds(100), "\(mapReads) map reads in \(elapsed)")
        print(
            "RedisClusterReshardTests: \(Self.slotsMoved) slots resharded in \(resharded - statsReset) under "
                + "load; \(record.samples.count) operations, failures \(failures.count), wrong values "
                + "\(record.wrongValues.count); p99 \(record.samples.map(\.duration).quantile(0.99).milliseconds) ms, "
                + "max \(record.samples.map(\.duration).quantile(1).milliseconds) ms; map reads asked of the nodes "
                + "\(mapReads) in \(elapsed); tier: MOVED \(statistics.movedRedirects - statisticsBefore.movedRedirects), "
                + "ASK \(statistics.askRedirects - statisticsBefore.askRedirects), retries "
                + "\(statistics.retries - statisticsBefore.retries), map reads "
                + "\(statistics.topologyRefreshes - statisticsBefore.topologyRefreshes)")
        await cache.close()
    }

    /// Moves `slots` slots from the primary on port `source` to the one on `target` as an operator does,
    /// with `redis-cli --cluster reshard` (a slot's keys are migrated while it is marked migrating on the
    /// source and importing on the target, then the slot is given to the target).
    static func reshard(_ slots: Int, from source: Int, to target: Int) async throws {
        let sourceID = try await send(["CLUSTER", "MYID"], toPort: source).string ?? ""
        let targetID = try await send(["CLUSTER", "MYID"], toPort: target).string ?? ""
        try await RedisCLI.run(
            port: source,
            [
                "--cluster", "reshard", "127.0.0.1:\(source)", "--cluster-from", sourceID, "--cluster-to", targetID,
                "--cluster-slots", String(slots), "--cluster-yes",
            ],
            timeout: .seconds(300), printsMuch: true)
    }

    /// The `CLUSTER SHARDS` and `CLUSTER SLOTS` calls every node on `ports` has answered since its last
    /// `CONFIG RESETSTAT`, by `INFO commandstats`.
    static func mapReads(on ports: [Int]) async throws -> Int {
        var total = 0
        for port in ports {
            let info = try await send(["INFO", "commandstats"], toPort: port).string ?? ""
            for line in info.split(whereSeparator: \.isNewline)
            where line.hasPrefix("cmdstat_cluster|shards:") || line.hasPrefix("cmdstat_cluster|slots:") {
                let calls = line.split(separator: ",").first { $0.contains("calls=") }
                total += calls.flatMap { Int($0.split(separator: "=").last ?? "") } ?? 0
            }
        }
        return total
    }

    @discardableResult
    static func send(_ arguments: [String], toPort port: Int) async throws -> RESPValue {
        let node = try RedisCluster.connection(port: port)
        do {
            let reply = try await node.send(RESPCommand(arguments: arguments.map { Array($0.utf8) }))
            await node.close()
            return reply
        } catch {
            await node.close()
            throw error
        }
    }
}

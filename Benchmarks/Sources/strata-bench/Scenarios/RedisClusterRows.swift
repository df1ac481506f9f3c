import CacheCore
import Foundation
import RedisCache

/// The Redis tier on a loopback Redis Cluster (issue 25's throughput figures), beside the same tier on one
/// standalone server, all started by the benchmark (``RedisBenchCluster``, ``RedisBenchServer``) and stopped
/// by pid at the end. Rounds alternate baseline and Strata:
///
/// - `redis-cluster-get-concurrent-64`: 64 tasks reading 16 B values through a tier pointed at one node of
///   the cluster vs `redis-benchmark --cluster -c 50 -d 16` run right before (its GET row); target ≥ 1.0×.
/// - `redis-cluster-get-16b-p50`: one task's sequential reads on the cluster vs on the standalone server,
///   same keys, back to back in each round; the figure is the p50 in ns; target: within 5 µs.
/// - `redis-cluster-standalone-get-concurrent-64`: the 64-task row on the standalone server vs
///   `redis-benchmark -c 50` on it, for reference.
///
/// Every read is checked to hit. Throughput rows report ops/s; the ratio is Strata's cost over the
/// baseline's, as in ``RedisTierRows``.
enum RedisClusterRows {
    static let scenario = Scenario(
        "redis-cluster-get-concurrent-64", "redis-cluster-get-16b-p50", "redis-cluster-standalone-get-concurrent-64"
    ) { context in
        guard RedisBenchServer.executable("redis-server") != nil, RedisBenchServer.executable("redis-benchmark") != nil,
            RedisBenchServer.executable("redis-cli") != nil
        else {
            print("redis-cluster rows skipped: redis-server, redis-cli or redis-benchmark is not installed")
            return []
        }
        let formingStart = monotonicNanoseconds()
        let cluster = try RedisBenchCluster()
        print(
            "redis-cluster: 6 nodes (\(try cluster.primaryCount()) primaries) on ports \(cluster.ports), formed in "
                + "\(formatNumber(Double(monotonicNanoseconds() - formingStart) / 1e9)) s")
        let server = try RedisBenchServer()
        let masterKey = Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 5 &+ 11) })
        func tier(port: Int, namespace: String) throws -> RedisCache<String, Data> {
            var configuration = RedisCacheConfiguration(
                port: port, namespace: namespace, masterKeySource: .masterKey(masterKey))
            // Loopback on a loaded 2-core machine: room for scheduling hiccups, not for a slow server.
            configuration.connectTimeout = .seconds(2)
            configuration.readTimeout = .seconds(1)
            configuration.writeTimeout = .seconds(1)
            return try RedisCache(configuration: configuration)
        }
        let rounds = context.quick ? 3 : 7
        let sequential = context.size(full: 20_000, quick: 4_000)
        let total = context.size(full: 100_000, quick: 20_000)
        let value = DiskFixture.randomBytes(16, seed: 25)
        let onCluster = try tier(port: cluster.ports[0], namespace: "cluster-rows")
        let onServer = try tier(port: server.port, namespace: "cluster-rows")
        for cache in [onCluster, onServer] {
            for index in 0..<64 { try await cache.setValue(value, forKey: "key\(index)", expiry: .never) }
        }
        let primaries = onCluster.health.nodes.count
        var clusterConcurrent = Sides()
        var serverConcurrent = Sides()
        var clusterSequential = Sides()
        var serverSequential = Sides()
        for _ in 0..<rounds {
            let clusterFifty = try cluster.benchmark(
                ["-c", "50", "-n", String(total), "-d", "16", "-t", "set,get"], test: "GET")
            clusterConcurrent.add(baseline: clusterFifty.requestsPerSecond, row: clusterFifty)
            clusterConcurrent.add(strata: try await concurrentGets(onCluster, total: total))
            serverSequential.add(strata: try await sequentialGets(onServer, count: sequential))
            clusterSequential.add(strata: try await sequentialGets(onCluster, count: sequential))
            let fifty = try server.benchmark(
                ["-c", "50", "-n", String(total), "-d", "16", "-t", "set,get"], test: "GET")
            serverConcurrent.add(baseline: fifty.requestsPerSecond, row: fifty)
            serverConcurrent.add(strata: try await concurrentGets(onServer, total: total))
        }
        var rows: [ScenarioResult] = []
        rows.append(
            clusterConcurrent.throughputRow(
                "redis-cluster-get-concurrent-64",
                note: "64 tasks reading 16 B values through one tier on a 3-primary + 3-replica loopback cluster "
                    + "(found from one node's address; \(primaries) node connections) vs `redis-benchmark --cluster "
                    + "-c 50 -n \(total) -d 16 -t set,get` (its GET row), same cluster, alternating rounds"))
        rows.append(
            ScenarioResult(
                name: "redis-cluster-get-16b-p50", unit: .nanosecondsPerOperation,
                strata: Summary(clusterSequential.percentiles(0.5)),
                baseline: Summary(serverSequential.percentiles(0.5)),
                target: Target(description: "p50 ≤ standalone + 5 µs") {
                    $0.strata.median - $0.baseline.median <= 5_000
                },
                extras: [
                    ("cluster p99 µs", clusterSequential.latencies.percentile(0.99) / 1000),
                    ("standalone p99 µs", serverSequential.latencies.percentile(0.99) / 1000),
                    ("cluster ops/s", Summary(clusterSequential.strata).median),
                    ("standalone ops/s", Summary(serverSequential.strata).median),
                ],
                notes: [
                    "one task, sequential sealed entry(forKey:) of 16 B over 64 keys, p50 per round: the tier on "
                        + "the cluster vs the same tier on one standalone redis-server, back to back each round"
                ]))
        rows.append(
            serverConcurrent.throughputRow(
                "redis-cluster-standalone-get-concurrent-64",
                note: "reference: the same 64 tasks on one standalone redis-server vs `redis-benchmark -c 50 -n "
                    + "\(total) -d 16 -t set,get`, in the same rounds as the cluster rows"))
        await onCluster.close()
        await onServer.close()
        return rows
    }

    /// One side's rates and every round's latencies, and the baseline's rates.
    private struct Sides {
        var strata: [Double] = []
        var baseline: [Double] = []
        var rounds: [Latencies] = []
        var baselineRow: RedisBenchServer.BenchmarkRow?

        /// The last round's latencies.
        var latencies: Latencies { rounds.last ?? Latencies() }

        mutating func add(baseline rate: Double, row: RedisBenchServer.BenchmarkRow) {
            baseline.append(rate)
            baselineRow = row
        }

        mutating func add(strata round: (rate: Double, latencies: Latencies)) {
            strata.append(round.rate)
            rounds.append(round.latencies)
        }

        /// Each round's `fraction` percentile, in ns.
        func percentiles(_ fraction: Double) -> [Double] { rounds.map { $0.percentile(fraction) } }

        func throughputRow(_ name: String, note: String) -> ScenarioResult {
            ScenarioResult(
                name: name, unit: .operationsPerSecond, strata: Summary(strata), baseline: Summary(baseline),
                target: Target(description: "≥ 1.0× throughput") { $0.ratio <= 1 },
                extras: [
                    ("strata p50 µs", latencies.percentile(0.5) / 1000),
                    ("strata p99 µs", latencies.percentile(0.99) / 1000),
                    ("redis-benchmark p50 µs", (baselineRow?.p50Milliseconds ?? .nan) * 1000),
                    ("redis-benchmark p99 µs", (baselineRow?.p99Milliseconds ?? .nan) * 1000),
                ],
                notes: [note])
        }
    }

    /// `count` sequential reads cycling over the 64 keys; ops/s and each read's latency.
    private static func sequentialGets(
        _ cache: RedisCache<String, Data>, count: Int
    ) async throws -> (rate: Double, latencies: Latencies) {
        let keys = (0..<64).map { "key\($0)" }
        var latencies = Latencies()
        latencies.samples.reserveCapacity(count)
        let start = monotonicNanoseconds()
        for index in 0..<count {
            let operationStart = monotonicNanoseconds()
            let read = try await cache.entry(forKey: keys[index & 63])
            try expect(read?.value.count == 16, "the Redis tier missed")
            latencies.samples.append(Double(monotonicNanoseconds() - operationStart))
        }
        return (Double(count) / (Double(monotonicNanoseconds() - start) / 1e9), latencies)
    }

    /// `total` reads by 64 tasks, each on its own key; ops/s and each read's latency.
    private static func concurrentGets(
        _ cache: RedisCache<String, Data>, total: Int
    ) async throws -> (rate: Double, latencies: Latencies) {
        let start = monotonicNanoseconds()
        let samples = try await withThrowingTaskGroup(of: [Double].self) { group in
            for task in 0..<64 {
                group.addTask {
                    var samples: [Double] = []
                    samples.reserveCapacity(total / 64)
                    for _ in 0..<(total / 64) {
                        let operationStart = monotonicNanoseconds()
                        let read = try await cache.entry(forKey: "key\(task)")
                        try expect(read?.value.count == 16, "the Redis tier missed")
                        samples.append(Double(monotonicNanoseconds() - operationStart))
                    }
                    return samples
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        return (Double(samples.count) / (Double(monotonicNanoseconds() - start) / 1e9), Latencies(samples: samples))
    }
}

import CacheCore
import Foundation
import RedisCache

/// The Redis tier over TLS, each row against `redis-benchmark --tls` run on the same server right before
/// it, with the same two rows over plain TCP beside them (one server listening on both ports, the rounds
/// alternating plain and TLS), so the cost of TLS reads off one run (issue 29's figures): sequential `GET`
/// of 16 B vs `redis-benchmark -c 1`, and 64 tasks vs `redis-benchmark -c 50`.
///
/// The server's certificate is made for the run by `openssl` (``BenchCertificates``) and the tier trusts it
/// as its CA file, so verification, host-name check and all, runs as in production. Throughput rows report
/// ops/s; the ratio is Strata's cost over the baseline's, as in ``RedisTierRows``.
enum RedisTLSRows {
    static let scenario = Scenario(
        "redis-tls-get-16b", "redis-tls-get-concurrent-64", "redis-tls-plain-get-16b",
        "redis-tls-plain-get-concurrent-64"
    ) { context in
        guard RedisBenchServer.executable("redis-server") != nil, RedisBenchServer.executable("redis-benchmark") != nil
        else {
            print("redis-tls rows skipped: redis-server or redis-benchmark is not installed")
            return []
        }
        let certificates = try BenchCertificates()
        let server = try RedisBenchServer(certificates: certificates)
        let masterKey = Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
        func tier(_ namespace: String, tls: Bool) throws -> RedisCache<String, Data> {
            var configuration = RedisCacheConfiguration(
                port: tls ? server.tlsPort : server.port, namespace: namespace, masterKeySource: .masterKey(masterKey))
            if tls {
                configuration.tls = RedisCacheConfiguration.TLS(certificateAuthorityFile: certificates.certificate)
            }
            // Loopback on a loaded 2-core machine: room for scheduling hiccups, not for a slow server.
            configuration.connectTimeout = .seconds(2)
            configuration.readTimeout = .seconds(1)
            configuration.writeTimeout = .seconds(1)
            return try RedisCache(configuration: configuration)
        }
        let rounds = context.quick ? 3 : 7
        let sequential = context.size(full: 20_000, quick: 4_000)
        let total = context.size(full: 100_000, quick: 20_000)
        let value = DiskFixture.randomBytes(16, seed: 29)
        var rows: [ScenarioResult] = []

        for tls in [false, true] {
            let prefix = tls ? "redis-tls" : "redis-tls-plain"
            let cache = try tier(prefix, tls: tls)
            for index in 0..<64 { try await cache.setValue(value, forKey: "key\(index)", expiry: .never) }
            var sequentialSides = Sides()
            var concurrentSides = Sides()
            for _ in 0..<rounds {
                let single = try server.benchmark(
                    ["-c", "1", "-n", String(sequential), "-d", "16", "-t", "set,get"], test: "GET", tls: tls)
                sequentialSides.add(baseline: single)
                sequentialSides.add(strata: try await sequentialGets(cache, count: sequential))
                let fifty = try server.benchmark(
                    ["-c", "50", "-n", String(total), "-d", "16", "-t", "set,get"], test: "GET", tls: tls)
                concurrentSides.add(baseline: fifty)
                concurrentSides.add(strata: try await concurrentGets(cache, total: total))
            }
            let transport = tls ? "TLS (1.3, verified against the run's CA file)" : "plain TCP"
            let tool = tls ? "redis-benchmark --tls" : "redis-benchmark"
            rows.append(
                sequentialSides.row(
                    "\(prefix)-get-16b", minimumThroughput: 0.9,
                    note: "one task, sequential sealed entry(forKey:) of 16 B over \(transport) vs `\(tool) -c 1 "
                        + "-d 16 -t get`, same server, alternating rounds"))
            rows.append(
                concurrentSides.row(
                    "\(prefix)-get-concurrent-64", minimumThroughput: 1.0,
                    note: "64 tasks reading 16 B values through one tier over \(transport) vs `\(tool) -c 50 "
                        + "-n \(total) -d 16 -t get`, same server, alternating rounds"))
            await cache.close()
        }
        return rows
    }

    /// Both sides of one row across its rounds.
    private struct Sides {
        var strata: [Double] = []
        var baseline: [Double] = []
        var latencies = Latencies()
        var baselineRow: RedisBenchServer.BenchmarkRow?

        mutating func add(baseline row: RedisBenchServer.BenchmarkRow) {
            baseline.append(row.requestsPerSecond)
            baselineRow = row
        }

        mutating func add(strata round: (rate: Double, latencies: Latencies)) {
            strata.append(round.rate)
            latencies = round.latencies
        }

        func row(_ name: String, minimumThroughput: Double, note: String) -> ScenarioResult {
            ScenarioResult(
                name: name, unit: .operationsPerSecond, strata: Summary(strata), baseline: Summary(baseline),
                target: Target(description: "≥ \(minimumThroughput)× throughput") { $0.ratio <= 1 / minimumThroughput },
                extras: [
                    ("strata p50 µs", latencies.percentile(0.5) / 1000),
                    ("strata p99 µs", latencies.percentile(0.99) / 1000),
                    ("redis-benchmark p50 µs", (baselineRow?.p50Milliseconds ?? .nan) * 1000),
                    ("redis-benchmark p99 µs", (baselineRow?.p99Milliseconds ?? .nan) * 1000),
                ],
                notes: [note])
        }
    }

    /// `count` sequential reads of one key; ops/s and each read's latency.
    private static func sequentialGets(
        _ cache: RedisCache<String, Data>, count: Int
    ) async throws -> (rate: Double, latencies: Latencies) {
        var latencies = Latencies()
        latencies.samples.reserveCapacity(count)
        let start = monotonicNanoseconds()
        for _ in 0..<count {
            let operationStart = monotonicNanoseconds()
            let read = try await cache.entry(forKey: "key0")
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
                        try expect(read != nil, "the Redis tier missed")
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

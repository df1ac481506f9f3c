import CacheCore
import DiskCache
import Foundation
import MemoryCache
import MultiCache
import RedisCache

/// The Redis tier's rows, each against a `redis-benchmark` run on the same server right before it, in
/// alternating rounds (`redis-benchmark` then Strata, `rounds` times). Throughput rows report ops/s; the
/// ratio is Strata's cost over the baseline's (the inverse of the throughput ratio the issue states:
/// ≥ 0.9× throughput is a ratio ≤ 1.11). p50/p99 of both sides are printed beside each row, in µs.
///
/// The server is started by the benchmark (a child `redis-server` on a free loopback port, killed by pid
/// at the end); client and server share the machine's cores, as in the anchors of `shared/REDIS.md`.
enum RedisTierRows {
    static let scenario = Scenario(
        "redis-get-16b", "redis-py-get-16b", "redis-get-4k", "redis-set-4k", "redis-get-concurrent-64",
        "redis-removeall", "redis-removeall-1m", "redis-multicache-hit"
    ) { context in
        guard RedisBenchServer.executable("redis-server") != nil, RedisBenchServer.executable("redis-benchmark") != nil
        else {
            // Outside CI (which installs them) a machine without Redis skips these rows rather than failing.
            print("redis rows skipped: redis-server or redis-benchmark is not installed")
            return []
        }
        let server = try RedisBenchServer()
        let masterKey = Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 1) })
        func tier(_ namespace: String) throws -> RedisCache<String, Data> {
            var configuration = RedisCacheConfiguration(
                port: server.port, namespace: namespace, masterKeySource: .masterKey(masterKey))
            // Loopback on a loaded 2-core machine: room for scheduling hiccups, not for a slow server.
            configuration.readTimeout = .seconds(1)
            configuration.writeTimeout = .seconds(1)
            return try RedisCache(configuration: configuration)
        }
        let rounds = context.quick ? 3 : 7
        let sequential = context.size(full: 20_000, quick: 4_000)
        var rows: [ScenarioResult] = []

        for (name, size, isSet) in [
            ("redis-get-16b", 16, false), ("redis-get-4k", 4096, false), ("redis-set-4k", 4096, true),
        ] {
            let cache = try tier(name)
            let value = DiskFixture.randomBytes(size, seed: UInt64(size))
            try await cache.setValue(value, forKey: "key", expiry: .never)
            var strataRates: [Double] = []
            var baselineRates: [Double] = []
            var strataLatencies = Latencies()
            var baselineRow: RedisBenchServer.BenchmarkRow?
            for _ in 0..<rounds {
                let row = try server.benchmark(
                    ["-c", "1", "-n", String(sequential), "-d", String(size), "-t", isSet ? "set" : "set,get"],
                    test: isSet ? "SET" : "GET")
                baselineRates.append(row.requestsPerSecond)
                baselineRow = row
                var latencies = Latencies()
                latencies.samples.reserveCapacity(sequential)
                let start = monotonicNanoseconds()
                for _ in 0..<sequential {
                    let operationStart = monotonicNanoseconds()
                    if isSet {
                        try await cache.setEntry(CacheEntry(value: value), forKey: "key")
                    } else {
                        let read = try await cache.entry(forKey: "key")
                        try expect(read?.value.count == size, "the Redis tier missed")
                    }
                    latencies.samples.append(Double(monotonicNanoseconds() - operationStart))
                }
                strataRates.append(Double(sequential) / (Double(monotonicNanoseconds() - start) / 1e9))
                strataLatencies = latencies
            }
            rows.append(
                row(
                    name, strata: strataRates, baseline: baselineRates, latencies: strataLatencies,
                    baselineRow: baselineRow, minimumThroughput: isSet ? 0.7 : (size == 16 ? 0.9 : 0.75),
                    note: "one task, sequential \(isSet ? "setEntry" : "entry(forKey:)") of \(size) B, sealed "
                        + "(AES-256-GCM; the tier has no unencrypted mode) vs `redis-benchmark -c 1 -d \(size) -t "
                        + "\(isSet ? "set" : "get")`"))
            await cache.close()
        }

        // redis-py's sequential GET (Benchmarks/redis_py_peer.py, one process per round) vs the tier's, alternating.
        do {
            let cache = try tier("redis-py-peer")
            let value = DiskFixture.randomBytes(16, seed: 16)
            try await cache.setValue(value, forKey: "key", expiry: .never)
            var strataRates: [Double] = []
            var peerRates: [Double] = []
            var strataLatencies = Latencies()
            var peerRound: RedisPyPeer.Round?
            for _ in 0..<rounds {
                guard let round = RedisPyPeer.round(port: server.port, count: sequential) else { break }
                peerRates += round.opsPerSecond
                peerRound = round
                var latencies = Latencies()
                latencies.samples.reserveCapacity(sequential)
                let start = monotonicNanoseconds()
                for _ in 0..<sequential {
                    let operationStart = monotonicNanoseconds()
                    let read = try await cache.entry(forKey: "key")
                    try expect(read?.value.count == 16, "the Redis tier missed")
                    latencies.samples.append(Double(monotonicNanoseconds() - operationStart))
                }
                strataRates.append(Double(sequential) / (Double(monotonicNanoseconds() - start) / 1e9))
                strataLatencies = latencies
            }
            if let peerRound, !strataRates.isEmpty {
                rows.append(
                    ScenarioResult(
                        name: "redis-py-get-16b", unit: .operationsPerSecond, strata: Summary(strataRates),
                        baseline: Summary(peerRates),
                        target: Target(description: "≥ 3× throughput") { $0.ratio <= 1.0 / 3 },
                        extras: [
                            ("strata p50 µs", strataLatencies.percentile(0.5) / 1000),
                            ("strata p99 µs", strataLatencies.percentile(0.99) / 1000),
                            ("redis-py p50 µs", peerRound.p50Microseconds),
                            ("redis-py p99 µs", peerRound.p99Microseconds),
                        ],
                        notes: [
                            "one task, sequential sealed entry(forKey:) of 16 B vs redis-py's plain GET of 16 B "
                                + "(Benchmarks/redis_py_peer.py, same server, alternating rounds)"
                        ]))
            } else {
                print("redis-py-get-16b skipped: python3 or redis-py (PyPI `redis`) is not available")
            }
            await cache.close()
        }

        // 64 concurrent tasks on one tier (one pipelined connection) vs 50 redis-benchmark clients.
        do {
            let cache = try tier("concurrent")
            let value = DiskFixture.randomBytes(16, seed: 64)
            for index in 0..<64 { try await cache.setValue(value, forKey: "key\(index)", expiry: .never) }
            let total = context.size(full: 100_000, quick: 20_000)
            var strataRates: [Double] = []
            var baselineRates: [Double] = []
            var strataLatencies = Latencies()
            var baselineRow: RedisBenchServer.BenchmarkRow?
            for _ in 0..<rounds {
                let row = try server.benchmark(["-n", String(total), "-d", "16", "-t", "set,get"], test: "GET")
                baselineRates.append(row.requestsPerSecond)
                baselineRow = row
                let start = monotonicNanoseconds()
                let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
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
                strataRates.append(Double(latencies.count) / (Double(monotonicNanoseconds() - start) / 1e9))
                strataLatencies = Latencies(samples: latencies)
            }
            rows.append(
                row(
                    "redis-get-concurrent-64", strata: strataRates, baseline: baselineRates,
                    latencies: strataLatencies, baselineRow: baselineRow, minimumThroughput: 1.0,
                    note: "64 tasks reading 16 B values through one tier vs `redis-benchmark -n \(total) -t get` "
                        + "(50 clients)"))
            await cache.close()
        }

        // removeAll over many entries vs over few: flat means the ratio stays near 1. The 1M row fills
        // through the tier (real sealed entries under keyed-hash names, ~15 s at 64 tasks) in full runs.
        for (name, many) in [
            ("redis-removeall", context.size(full: 100_000, quick: 20_000)),
            ("redis-removeall-1m", context.size(full: 1_000_000, quick: 50_000)),
        ] {
            let large = try tier("\(name)-large")
            let small = try tier("\(name)-small")
            let value = DiskFixture.randomBytes(16, seed: 1)
            try await fill(large, count: many, value: value)
            try await fill(small, count: 1_000, value: value)
            var largeTimes: [Double] = []
            var smallTimes: [Double] = []
            for _ in 0..<max(rounds, 5) {
                var start = monotonicNanoseconds()
                try await small.removeAll()
                smallTimes.append(Double(monotonicNanoseconds() - start) / 1e6)
                start = monotonicNanoseconds()
                try await large.removeAll()
                largeTimes.append(Double(monotonicNanoseconds() - start) / 1e6)
            }
            rows.append(
                ScenarioResult(
                    name: name, unit: .milliseconds, strata: Summary(largeTimes),
                    baseline: Summary(smallTimes),
                    target: Target(description: "≤ 1 ms, flat") { $0.strata.median <= 1 },
                    notes: [
                        "removeAll() (one INCR) over \(many) entries vs over 1,000 entries; the ratio is the "
                            + "flatness"
                    ]))
            await large.close()
            await small.close()
        }

        // A MultiCache tier-0 hit with the Redis tier attached vs without it. Both MultiCaches share one
        // memory and one disk tier, so the hits read the same table: with a table each, the two sides'
        // allocations landed differently from run to run and one side ran 30-40 % slower in some runs
        // whichever side it was, which measured the heap, not the Redis tier.
        do {
            let keys = DiskFixture.keys(2_000)
            let value = DiskFixture.randomBytes(100, seed: 0x3C)
            let memory = try MemoryCache<String, Data>()
            let disk = try DiskFixture.openCache(in: try context.makeDirectory("redis-multi"), engine: .files)
            let redis = try tier("multicache")
            let with = try MultiCache<String, Data>([memory, disk, redis])
            let without = try MultiCache<String, Data>([memory, disk])
            for key in keys { try await with.setValue(value, forKey: key, expiry: .never) }
            let lookups = [Int].randomIndices(context.size(full: 200_000, quick: 50_000), below: keys.count, seed: 3)
                .map { keys[$0] }
            let (strata, baseline) = try await context.alternatingRounds.runAsync(
                strata: {
                    try await nanosecondsPerOperationAsync(lookups.count) {
                        for key in lookups { _ = try await with.value(forKey: key) }
                    }
                },
                baseline: {
                    try await nanosecondsPerOperationAsync(lookups.count) {
                        for key in lookups { _ = try await without.value(forKey: key) }
                    }
                })
            rows.append(
                ScenarioResult(
                    name: "redis-multicache-hit", unit: .nanosecondsPerOperation, strata: strata, baseline: baseline,
                    target: .ratioAtMost(1.05),
                    notes: [
                        "MultiCache([memory, disk, redis]) tier-0 hit vs MultiCache([memory, disk]), both over the "
                            + "same memory and disk tiers"
                    ]))
            await redis.close()
        }
        return rows
    }

    private static func fill(_ cache: RedisCache<String, Data>, count: Int, value: Data) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for batch in stride(from: 0, to: count, by: count / 64 + 1) {
                group.addTask {
                    for index in batch..<min(count, batch + count / 64 + 1) {
                        try await cache.setValue(value, forKey: "key\(index)", expiry: .never)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    private static func row(
        _ name: String, strata: [Double], baseline: [Double], latencies: Latencies,
        baselineRow: RedisBenchServer.BenchmarkRow?, minimumThroughput: Double, note: String
    ) -> ScenarioResult {
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

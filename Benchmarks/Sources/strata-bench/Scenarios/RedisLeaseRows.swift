import CacheCore
import Foundation
import MemoryCache
import MultiCache
import RedisCache

/// What load-once across processes costs when nothing is contended (issue 27): a `MultiCache([memory, redis])`
/// with the load lease on (the default), against the same stack with `loadLease = nil`, on one server, in
/// alternating rounds.
///
/// - redis-lease-miss: `value(forKey:expiry:orLoad:)` of a key no tier holds (a fresh key each call; the loader
///   returns at once). Baseline: the same call on the stack without the lease, plus one Redis round trip (an
///   `entry(forKey:)` of a missing key) — the bound is 1.1× that.
/// - redis-lease-hit: the same call, every read a hit in the memory tier. Baseline: the stack without the
///   lease. Bound 1.02×.
enum RedisLeaseRows {
    static let scenario = Scenario("redis-lease-miss", "redis-lease-hit") { context in
        guard RedisBenchServer.executable("redis-server") != nil else {
            print("redis lease rows skipped: redis-server is not installed")
            return []
        }
        let server = try RedisBenchServer()
        let masterKey = Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 3) })
        func stack(_ namespace: String, lease: RedisCacheConfiguration.LoadLease?) throws -> (
            MultiCache<String, Data>, RedisCache<String, Data>
        ) {
            var configuration = RedisCacheConfiguration(
                port: server.port, namespace: namespace, masterKeySource: .masterKey(masterKey))
            configuration.readTimeout = .seconds(1)
            configuration.writeTimeout = .seconds(1)
            configuration.loadLease = lease
            let redis = try RedisCache<String, Data>(configuration: configuration)
            return (try MultiCache(tiers: [.init(try MemoryCache<String, Data>()), .init(redis)]), redis)
        }
        let (leased, leasedRedis) = try stack("lease-on", lease: .init())
        let (plain, plainRedis) = try stack("lease-off", lease: nil)
        let value = Data(repeating: 0x5A, count: 100)
        let load: @Sendable () async throws -> Data = { value }
        let misses = context.size(full: 2_000, quick: 400)
        var round = 0

        let (missStrata, missBaseline) = try await context.alternatingRounds.runAsync(
            strata: {
                round += 1
                let keys = (0..<misses).map { "miss-\(round)-\($0)" }
                return try await nanosecondsPerOperationAsync(misses) {
                    for key in keys { _ = try await leased.value(forKey: key, expiry: .seconds(3_600), orLoad: load) }
                }
            },
            baseline: {
                round += 1
                let keys = (0..<misses).map { "miss-\(round)-\($0)" }
                return try await nanosecondsPerOperationAsync(misses) {
                    for key in keys {
                        _ = try await plain.value(forKey: key, expiry: .seconds(3_600), orLoad: load)
                        _ = try await plainRedis.entry(forKey: "absent")
                    }
                }
            })

        // Hits in the memory tier: the keys are stored, then read once through each stack (its own write's
        // tracking echo drops the copy above; the read writes it back).
        let hitKeys = (0..<1_000).map { "hit-\($0)" }
        for key in hitKeys {
            try await leased.setValue(value, forKey: key, expiry: .never)
            try await plain.setValue(value, forKey: key, expiry: .never)
        }
        try await Task.sleep(for: .milliseconds(200))
        for key in hitKeys {
            _ = try await leased.value(forKey: key)
            _ = try await plain.value(forKey: key)
        }
        let lookups = [Int].randomIndices(context.size(full: 200_000, quick: 40_000), below: hitKeys.count, seed: 0x1EA5)
            .map { hitKeys[$0] }
        let (hitStrata, hitBaseline) = try await context.alternatingRounds.runAsync(
            strata: {
                try await nanosecondsPerOperationAsync(lookups.count) {
                    for key in lookups { _ = try await leased.value(forKey: key, expiry: .never, orLoad: load) }
                }
            },
            baseline: {
                try await nanosecondsPerOperationAsync(lookups.count) {
                    for key in lookups { _ = try await plain.value(forKey: key, expiry: .never, orLoad: load) }
                }
            })
        let turns = "Redis insertions \(leasedRedis.statistics.insertions), loads \(leased.statistics.loads)"
        await leasedRedis.close()
        await plainRedis.close()
        return [
            ScenarioResult(
                name: "redis-lease-miss", unit: .nanosecondsPerOperation, strata: missStrata, baseline: missBaseline,
                target: .ratioAtMost(1.1),
                notes: [
                    "\(misses) fresh keys a round, 100-byte values: strata = MultiCache([memory, redis]) load with "
                        + "the lease; baseline = the same without it plus one entry(forKey:) round trip; \(turns)"
                ]),
            ScenarioResult(
                name: "redis-lease-hit", unit: .nanosecondsPerOperation, strata: hitStrata, baseline: hitBaseline,
                target: .ratioAtMost(1.02),
                notes: ["value(forKey:expiry:orLoad:) tier-0 hits of 1,000 keys; strata = lease on, baseline = off"]),
        ]
    }
}

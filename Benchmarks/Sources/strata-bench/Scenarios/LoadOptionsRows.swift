import CacheCore
import Foundation
import MemoryCache
import MultiCache

/// Issue 17's two rows, both on a MultiCache over one MemoryCache, every read a tier-0 hit:
///
/// - load-options-hit: `value(forKey:expiry:options:orLoad:)` with every option on (fail-safe,
///   stale-while-revalidate, refresh-ahead not yet due, soft and hard timeouts), against the plain
///   `value(forKey:)` hit. The ratio is what the options cost a fresh hit.
/// - load-options-bulk-64: one `values(forKeys:)` of 64 keys, against 64 `value(forKey:)` hits in a loop (the
///   baseline's time is for the 64). The ratio is the bulk read's price over 64 single hits.
///
/// Both loops run in one nonisolated async function, so neither pays an executor hop per call.
enum LoadOptionsRows {
    static let scenario = Scenario("load-options-hit") { context in
        let keyCount = context.size(full: 10_000, quick: 2_000)
        let keys = (0..<keyCount).map { "key-\($0)" }
        let value = Data(repeating: 0x5A, count: 100)
        let memory = try MemoryCache<String, Data>()
        let multi = try MultiCache<String, Data>(tiers: [.init(memory, name: "memory")])
        for key in keys { try await multi.setValue(value, forKey: key, expiry: .seconds(3_600)) }
        let lookups = [Int].randomIndices(context.size(full: 200_000, quick: 50_000), below: keyCount, seed: 0x17)
            .map { keys[$0] }
        let expectedBytes = lookups.count * value.count
        let options = LoadOptions(
            failSafe: .init(maximumStaleness: .seconds(3_600), throttle: .seconds(30)),
            staleWhileRevalidate: .seconds(60), refreshAhead: 0.9, softTimeout: .milliseconds(200),
            hardTimeout: .seconds(2))
        let load: @Sendable () async throws -> Data = { value }

        let (strata, baseline) = try await context.alternatingRounds.runAsync(
            strata: {
                var bytes = 0
                let perOperation = try await nanosecondsPerOperationAsync(lookups.count) {
                    for key in lookups {
                        bytes &+= try await multi.value(
                            forKey: key, expiry: .seconds(3_600), options: options, orLoad: load
                        ).count
                    }
                }
                try expect(bytes == expectedBytes, "MultiCache with options returned \(bytes) bytes")
                return perOperation
            },
            baseline: {
                var bytes = 0
                let perOperation = try await nanosecondsPerOperationAsync(lookups.count) {
                    for key in lookups { bytes &+= try await multi.value(forKey: key)?.count ?? 0 }
                }
                try expect(bytes == expectedBytes, "MultiCache returned \(bytes) bytes")
                return perOperation
            }
        )
        try expect(multi.statistics.loads == 0, "a fresh hit ran a loader")

        let batches = stride(from: 0, to: lookups.count - 63, by: 64).map { Array(lookups[$0..<$0 + 64]) }
        let (bulk, singles) = try await context.alternatingRounds.runAsync(
            strata: {
                var count = 0
                let perBatch = try await nanosecondsPerOperationAsync(batches.count) {
                    for batch in batches { count &+= try await multi.values(forKeys: batch).count }
                }
                try expect(count > 0, "the bulk read found nothing")
                return perBatch
            },
            baseline: {
                var bytes = 0
                let perBatch = try await nanosecondsPerOperationAsync(batches.count) {
                    for batch in batches {
                        for key in batch { bytes &+= try await multi.value(forKey: key)?.count ?? 0 }
                    }
                }
                try expect(bytes == batches.count * 64 * value.count, "single reads returned \(bytes) bytes")
                return perBatch
            }
        )
        return [
            ScenarioResult(
                name: "load-options-hit",
                unit: .nanosecondsPerOperation,
                strata: strata,
                baseline: baseline,
                target: .ratioAtMost(1.1),
                notes: [
                    "\(keyCount) keys, 100-byte Data values, MultiCache over one MemoryCache, every read a fresh "
                        + "tier-0 hit; strata = value(forKey:expiry:options:orLoad:) with all options on, "
                        + "baseline = value(forKey:)"
                ]
            ),
            ScenarioResult(
                name: "load-options-bulk-64",
                unit: .nanosecondsPerOperation,
                strata: bulk,
                baseline: singles,
                target: .ratioAtMost(1.0),
                notes: [
                    "ns per 64 keys: strata = one values(forKeys:) of 64 tier-0 hits (duplicates possible), "
                        + "baseline = 64 value(forKey:) hits; ratio ≤ 1 means ≤ 64× one hit"
                ]
            ),
        ]
    }
}

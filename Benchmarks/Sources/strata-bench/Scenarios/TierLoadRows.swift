import CacheCore
import Foundation
import MemoryCache

/// Issue 27's rows for the load-once a single `MemoryCache` hosts (the one extension every tier shares),
/// every row against the plain `value(forKey:)` on the same cache:
///
/// - tier-load-hit: `value(forKey:expiry:orLoad:)`, every read a fresh hit.
/// - tier-load-options-hit: `value(forKey:expiry:options:orLoad:)` with every option on, every read a fresh hit.
/// - tier-load-bulk-64: one `values(forKeys:expiry:orLoad:)` of 64 hits, against 64 `value(forKey:)` hits (the
///   baseline's time is for the 64).
/// - tier-load-miss: `value(forKey:expiry:orLoad:)` of a key not cached, so the loader runs and its value is
///   stored, against a `value(forKey:)` miss followed by `setValue(_:forKey:expiry:)`.
///
/// The loops run in one nonisolated async function, so no call pays an executor hop.
enum TierLoadRows {
    static let scenario = Scenario("tier-load-hit", "tier-load-options-hit", "tier-load-bulk-64", "tier-load-miss") {
        context in
        let keyCount = context.size(full: 10_000, quick: 2_000)
        let keys = (0..<keyCount).map { "key-\($0)" }
        let value = Data(repeating: 0x5A, count: 100)
        let cache = try MemoryCache<String, Data>()
        for key in keys { try cache.setValue(value, forKey: key, expiry: .seconds(3_600)) }
        let lookups = [Int].randomIndices(context.size(full: 200_000, quick: 50_000), below: keyCount, seed: 0x27)
            .map { keys[$0] }
        let expectedBytes = lookups.count * value.count
        let options = LoadOptions(
            failSafe: .init(maximumStaleness: .seconds(3_600), throttle: .seconds(30)),
            staleWhileRevalidate: .seconds(60), refreshAhead: 0.9, softTimeout: .milliseconds(200),
            hardTimeout: .seconds(2))
        let load: @Sendable () async throws -> Data = { value }

        func plainHits() throws -> Double {
            var bytes = 0
            let perOperation = nanosecondsPerOperation(lookups.count) {
                for key in lookups { bytes &+= cache.value(forKey: key)?.count ?? 0 }
            }
            try expect(bytes == expectedBytes, "value(forKey:) returned \(bytes) bytes")
            return perOperation
        }

        let (hit, hitBaseline) = try await context.alternatingRounds.runAsync(
            strata: {
                var bytes = 0
                let perOperation = try await nanosecondsPerOperationAsync(lookups.count) {
                    for key in lookups {
                        bytes &+= try await cache.value(forKey: key, expiry: .seconds(3_600), orLoad: load).count
                    }
                }
                try expect(bytes == expectedBytes, "load-once returned \(bytes) bytes")
                return perOperation
            },
            baseline: plainHits
        )
        let (optionsHit, optionsBaseline) = try await context.alternatingRounds.runAsync(
            strata: {
                var bytes = 0
                let perOperation = try await nanosecondsPerOperationAsync(lookups.count) {
                    for key in lookups {
                        bytes &+= try await cache.value(
                            forKey: key, expiry: .seconds(3_600), options: options, orLoad: load
                        ).count
                    }
                }
                try expect(bytes == expectedBytes, "load-once with options returned \(bytes) bytes")
                return perOperation
            },
            baseline: plainHits
        )
        try expect(cache.statistics.loads == 0, "a fresh hit ran a loader")

        let batches = stride(from: 0, to: lookups.count - 63, by: 64).map { Array(lookups[$0..<$0 + 64]) }
        let loadBatch: @Sendable ([String]) async throws -> [String: Data] = { keys in
            Dictionary(keys.map { ($0, value) }, uniquingKeysWith: { first, _ in first })
        }
        let (bulk, singles) = try await context.alternatingRounds.runAsync(
            strata: {
                var count = 0
                let perBatch = try await nanosecondsPerOperationAsync(batches.count) {
                    for batch in batches {
                        count &+= try await cache.values(forKeys: batch, expiry: .seconds(3_600), orLoad: loadBatch)
                            .count
                    }
                }
                try expect(count > 0, "the bulk load found nothing")
                return perBatch
            },
            baseline: {
                var bytes = 0
                let perBatch = nanosecondsPerOperation(batches.count) {
                    for batch in batches {
                        for key in batch { bytes &+= cache.value(forKey: key)?.count ?? 0 }
                    }
                }
                try expect(bytes == batches.count * 64 * value.count, "single reads returned \(bytes) bytes")
                return perBatch
            }
        )
        try expect(cache.statistics.loads == 0, "a bulk read of hits ran a loader")

        // Misses: each round loads (or, for the baseline, sets) `missCount` keys no round used before.
        let missCount = context.size(full: 20_000, quick: 5_000)
        let missCache = try MemoryCache<String, Data>()
        let round = LockedCounter()
        let (miss, missBaseline) = try await context.alternatingRounds.runAsync(
            strata: {
                let prefix = "load-\(round.next())-"
                let missKeys = (0..<missCount).map { prefix + String($0) }
                var bytes = 0
                let perOperation = try await nanosecondsPerOperationAsync(missCount) {
                    for key in missKeys {
                        bytes &+= try await missCache.value(forKey: key, expiry: .seconds(3_600), orLoad: load).count
                    }
                }
                try expect(bytes == missCount * value.count, "loads returned \(bytes) bytes")
                missCache.removeAll()
                return perOperation
            },
            baseline: {
                let prefix = "set-\(round.next())-"
                let missKeys = (0..<missCount).map { prefix + String($0) }
                var bytes = 0
                let perOperation = try nanosecondsPerOperation(missCount) {
                    for key in missKeys {
                        if missCache.value(forKey: key) == nil {
                            try missCache.setValue(value, forKey: key, expiry: .seconds(3_600))
                            bytes &+= value.count
                        }
                    }
                }
                try expect(bytes == missCount * value.count, "sets stored \(bytes) bytes")
                missCache.removeAll()
                return perOperation
            }
        )
        let loadNote = "\(keyCount) keys, 100-byte Data values, one MemoryCache, baseline = value(forKey:) hits"
        return [
            ScenarioResult(
                name: "tier-load-hit", unit: .nanosecondsPerOperation, strata: hit, baseline: hitBaseline,
                target: .none, notes: [loadNote + "; strata = value(forKey:expiry:orLoad:) hits"]),
            ScenarioResult(
                name: "tier-load-options-hit", unit: .nanosecondsPerOperation, strata: optionsHit,
                baseline: optionsBaseline, target: .none,
                notes: [loadNote + "; strata = value(forKey:expiry:options:orLoad:) hits, every option on"]),
            ScenarioResult(
                name: "tier-load-bulk-64", unit: .nanosecondsPerOperation, strata: bulk, baseline: singles,
                target: .none,
                notes: ["ns per 64 keys: strata = one values(forKeys:expiry:orLoad:) of 64 hits, baseline = 64 hits"]),
            ScenarioResult(
                name: "tier-load-miss", unit: .nanosecondsPerOperation, strata: miss, baseline: missBaseline,
                target: .none,
                notes: [
                    "\(missCount) new keys a round: strata = value(forKey:expiry:orLoad:) runs the loader and stores, "
                        + "baseline = a value(forKey:) miss then setValue"
                ]),
        ]
    }
}

/// A counter shared by the rounds of one scenario.
private final class LockedCounter: @unchecked Sendable {
    // @unchecked: `count` is only touched under `lock`.
    private let lock = NSLock()
    private var count = 0

    func next() -> Int {
        lock.lock()
        defer { lock.unlock() }
        count += 1
        return count
    }
}

import CacheCore
import MemoryCache

/// Issue 16's tag rows, on MemoryCache<String, Int> of 100k keys:
///
/// - memory-tagged-hit: synchronous hits on entries that each carry two tags (one shared by every entry,
///   one of 1,000 per-group tags), against hits on an untagged cache of the same keys. The ratio is what
///   checking a hit's tag versions costs.
/// - tag-remove-100k: one `removeAll(taggedWith:)` of a tag carried by all 100k entries, in milliseconds;
///   the baseline is one `removeAll()` of the same cache, for scale. The target is absolute (≤ 1 ms).
enum TagRows {
    static let scenario = Scenario("memory-tagged-hit", "tag-remove-100k") { context in
        let keyCount = 100_000
        let keys = (0..<keyCount).map { "key-\($0)" }
        let lookups = [Int].shuffledIndices(keyCount, seed: 0x7A6).map { keys[$0] }

        let tagged = try MemoryCache<String, Int>()
        let untagged = try MemoryCache<String, Int>()
        for (index, key) in keys.enumerated() {
            try tagged.setValue(index, forKey: key, tags: ["all", "group-\(index % 1_000)"])
            try untagged.setValue(index, forKey: key)
        }
        let expectedSum = lookups.reduce(0) { $0 &+ (tagged.value(forKey: $1) ?? 0) }

        let (hit, plainHit) = try context.alternatingRounds.run(
            strata: {
                var sum = 0
                let perOperation = nanosecondsPerOperation(lookups.count) {
                    for key in lookups { sum &+= tagged.value(forKey: key) ?? 0 }
                }
                try expect(sum == expectedSum, "tagged hits summed to \(sum)")
                return perOperation
            },
            baseline: {
                var sum = 0
                let perOperation = nanosecondsPerOperation(lookups.count) {
                    for key in lookups { sum &+= untagged.value(forKey: key) ?? 0 }
                }
                try expect(sum == expectedSum, "untagged hits summed to \(sum)")
                return perOperation
            }
        )

        // Each round fills a fresh cache (untimed) and times the one call.
        func filled() throws -> MemoryCache<String, Int> {
            let cache = try MemoryCache<String, Int>()
            for (index, key) in keys.enumerated() { try cache.setValue(index, forKey: key, tags: ["all"]) }
            return cache
        }
        let (remove, wipe) = try context.alternatingRounds.run(
            strata: {
                let cache = try filled()
                let milliseconds = measureNanoseconds { cache.removeAll(taggedWith: "all") } / 1e6
                try expect(cache.value(forKey: keys[0]) == nil, "a tagged entry survived removeAll(taggedWith:)")
                return milliseconds
            },
            baseline: {
                let cache = try filled()
                return measureNanoseconds { cache.removeAll() } / 1e6
            }
        )
        return [
            ScenarioResult(
                name: "memory-tagged-hit",
                unit: .nanosecondsPerOperation,
                strata: hit,
                baseline: plainHit,
                target: .ratioAtMost(1.2),
                notes: [
                    "\(keyCount) String keys, shardCount 1, each entry tagged [\"all\", \"group-<i % 1000>\"]; "
                        + "baseline = the same hits on an untagged cache"
                ]
            ),
            ScenarioResult(
                name: "tag-remove-100k",
                unit: .milliseconds,
                strata: remove,
                baseline: wipe,
                target: Target(description: "strata ≤ 1 ms") { $0.strata.median <= 1 },
                notes: [
                    "one removeAll(taggedWith:) of a tag on all \(keyCount) entries (O(1): one counter "
                        + "increment); baseline = removeAll() of the same cache, for scale"
                ]
            ),
        ]
    }
}

import MemoryCache

/// memory-get-hit: synchronous hits on a MemoryCache<String, Int> of 100k keys, in random order, against
/// a `[String: Int]` behind the same kind of pthread lock.
///
/// The baseline is the least a thread-safe map can do, so the ratio is the price of the LRU bookkeeping
/// (a recency-list update per hit), the expiry check and the statistics.
enum MemoryGetHit {
    static let scenario = Scenario("memory-get-hit") { context in
        let keyCount = 100_000
        let keys = (0..<keyCount).map { "key-\($0)" }
        // One batch is one pass over every key, in an order that defeats the CPU's prefetching.
        let lookups = [Int].shuffledIndices(keyCount, seed: 0x6E7).map { keys[$0] }

        let cache = try MemoryCache<String, Int>()
        let dictionary = PthreadLocked([String: Int]())
        for (index, key) in keys.enumerated() {
            try cache.setValue(index, forKey: key)
            dictionary.withLock { $0[key] = index }
        }

        let (strata, baseline) = context.alternatingRounds.run(
            strata: {
                nanosecondsPerOperation(lookups.count) {
                    var sum = 0
                    for key in lookups { sum &+= cache.value(forKey: key) ?? 0 }
                    blackHole(sum)
                }
            },
            baseline: {
                nanosecondsPerOperation(lookups.count) {
                    var sum = 0
                    for key in lookups { sum &+= dictionary.withLock { $0[key] } ?? 0 }
                    blackHole(sum)
                }
            }
        )
        return [
            ScenarioResult(
                name: "memory-get-hit",
                unit: .nanosecondsPerOperation,
                strata: strata,
                baseline: baseline,
                target: .ratioAtMost(1.3),
                notes: ["\(keyCount) String keys, shardCount 1, lookups in seeded random order"]
            )
        ]
    }
}

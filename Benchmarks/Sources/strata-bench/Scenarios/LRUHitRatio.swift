import MemoryCache

/// lru-hit-ratio-1k / -10k: MemoryCache's hit ratio (one shard, so eviction is one exact LRU) on a
/// seeded Zipf(0.99) trace of 1M requests over 100k keys, against an exact reference LRU simulation.
/// Every request is a get, and a miss stores the key. NSCache's hit ratio on the same trace is printed
/// beside it, and so is the hit ratio of the sharded MemoryCache that memory-concurrent measures.
///
/// This checks eviction order, not speed: an exact LRU must match the reference to the request, so the
/// target is equality within 0.1 percentage point.
enum LRUHitRatio {
    static let scenario = Scenario("lru-hit-ratio-1k", "lru-hit-ratio-10k") { context in
        // --quick (CI) replays a quarter of the trace over a quarter of the keys: the same check, other figures.
        let keyCount = context.size(full: 100_000, quick: 25_000)
        let requestCount = context.size(full: 1_000_000, quick: 250_000)
        let trace = ZipfTrace.make(keyCount: keyCount, length: requestCount, exponent: 0.99, seed: 0x21FF)
        try expect(
            ReferenceLRU.agreesWithNaiveLRU(on: trace.prefix(50_000), capacity: 64),
            "the reference LRU disagrees with a naive LRU")
        var results: [ScenarioResult] = []
        for capacity in [1_000, 10_000] {
            let cache = try MemoryCache<Int, Int>(countLimit: capacity, shardCount: 1)
            var strataHits = 0
            for key in trace {
                if cache.value(forKey: key) != nil {
                    strataHits += 1
                } else {
                    try cache.setValue(key, forKey: key)
                }
            }

            var reference = ReferenceLRU(capacity: capacity)
            var referenceHits = 0
            for key in trace where reference.access(key) { referenceHits += 1 }

            let nsCache = NSCacheWrapper<Int, Int>(countLimit: capacity)
            var nsCacheHits = 0
            for key in trace {
                if nsCache.value(forKey: key) != nil {
                    nsCacheHits += 1
                } else {
                    nsCache.setValue(key, forKey: key)
                }
            }

            // A sharded cache gives each shard its share of the capacity and evicts by second chance
            // (CLOCK): printed for information, to show what its approximate order costs in hits.
            let sharded = try MemoryCache<Int, Int>(countLimit: capacity, shardCount: MemoryConcurrent.shardCount)
            var shardedHits = 0
            for key in trace {
                if sharded.value(forKey: key) != nil {
                    shardedHits += 1
                } else {
                    try sharded.setValue(key, forKey: key)
                }
            }

            let percent = { (hits: Int) in Double(hits) / Double(requestCount) * 100 }
            results.append(
                ScenarioResult(
                    name: "lru-hit-ratio-\(capacity / 1000)k",
                    unit: .percentHits,
                    strata: Summary(exactly: percent(strataHits)),
                    baseline: Summary(exactly: percent(referenceHits)),
                    ratio: percent(strataHits) / percent(referenceHits),
                    target: Target(description: "equal ±0.1 pt") {
                        abs($0.strata.median - $0.baseline.median) <= 0.1
                    },
                    extras: [
                        ("NSCache % hits", percent(nsCacheHits)),
                        ("MemoryCache % hits at shardCount \(sharded.shardCount)", percent(shardedHits)),
                    ],
                    notes: ["Zipf(0.99), \(requestCount) requests over \(keyCount) keys, capacity \(capacity)"]
                )
            )
        }
        return results
    }
}

import MemoryCache

/// memory-vs-nscache: the memory-set-evict workload (new keys into a cache full at 10k entries) against
/// the common Swift wrapper over `NSCache` with the same `countLimit`.
enum MemoryVersusNSCache {
    static let scenario = Scenario("memory-vs-nscache") { context in
        let countLimit = MemorySetEvict.countLimit
        let ring = SetEvictWorkload(context: context, countLimit: countLimit)
        let cache = try MemoryCache<String, Int>(countLimit: countLimit)
        let nsCache = NSCacheWrapper<String, Int>(countLimit: countLimit)
        var cachePosition = try ring.prefill { try cache.setValue($1, forKey: $0) }
        var nsCachePosition = ring.prefill { nsCache.setValue($1, forKey: $0) }

        let (strata, baseline) = try context.alternatingRounds.run(
            strata: {
                try nanosecondsPerOperation(ring.batch) {
                    for _ in 0..<ring.batch {
                        try cache.setValue(cachePosition, forKey: ring.key(at: cachePosition))
                        cachePosition += 1
                    }
                }
            },
            baseline: {
                nanosecondsPerOperation(ring.batch) {
                    for _ in 0..<ring.batch {
                        nsCache.setValue(nsCachePosition, forKey: ring.key(at: nsCachePosition))
                        nsCachePosition += 1
                    }
                }
            }
        )
        return [
            ScenarioResult(
                name: "memory-vs-nscache",
                unit: .nanosecondsPerOperation,
                strata: strata,
                baseline: baseline,
                target: Target(description: "Strata ≥ 5× faster (ratio ≤ 0.2)") { $0.ratio <= 0.2 },
                notes: [
                    "NSCache wrapper: NSObject key box forwarding hash/isEqual, class value box, countLimit \(countLimit)"
                ]
            )
        ]
    }
}

import MemoryCache

/// memory-set-evict: inserting keys the cache does not hold into a MemoryCache that is full at its count
/// limit of 10k, so every insert evicts the least recently used entry; against a `[String: Int]` behind
/// the same kind of lock that inserts the key and removes the one inserted 10k earlier.
///
/// The baseline knows which key to drop (its keys arrive in order); the cache must find its victim
/// itself, so the ratio is the price of eviction.
enum MemorySetEvict {
    static let countLimit = 10_000

    static let scenario = Scenario("memory-set-evict") { context in
        let ring = SetEvictWorkload(context: context, countLimit: countLimit)
        let cache = try MemoryCache<String, Int>(countLimit: countLimit)
        let dictionary = PthreadLocked([String: Int]())
        var cachePosition = try ring.prefill { try cache.setValue($1, forKey: $0) }
        var dictionaryPosition = ring.prefill { key, value in dictionary.withLock { $0[key] = value } }

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
                        let key = ring.key(at: dictionaryPosition)
                        let oldest = ring.key(at: dictionaryPosition - countLimit)
                        dictionary.withLock {
                            $0[key] = dictionaryPosition
                            $0.removeValue(forKey: oldest)
                        }
                        dictionaryPosition += 1
                    }
                }
            }
        )
        blackHole(cache.value(forKey: ring.key(at: cachePosition - 1)))
        return [
            ScenarioResult(
                name: "memory-set-evict",
                unit: .nanosecondsPerOperation,
                strata: strata,
                baseline: baseline,
                target: .ratioAtMost(2.0),
                notes: ["count limit \(countLimit), \(ring.batch) inserts of keys not held per round"]
            )
        ]
    }
}

/// Keys for the insert-and-evict scenarios: a ring of pre-built strings far larger than the count limit,
/// so a key comes round again only long after it was evicted, and building strings stays out of the timing.
struct SetEvictWorkload {
    let keys: [String]
    let batch: Int
    let countLimit: Int

    init(context: RunContext, countLimit: Int) {
        self.countLimit = countLimit
        batch = context.size(full: 100_000, quick: 20_000)
        keys = (0..<(countLimit * 20)).map { "key-\($0)" }
    }

    func key(at position: Int) -> String { keys[position % keys.count] }

    /// Fills a store to the count limit; returns the position of the first key it does not hold.
    func prefill(_ insert: (String, Int) throws -> Void) rethrows -> Int {
        for position in 0..<countLimit { try insert(key(at: position), position) }
        return countLimit
    }
}

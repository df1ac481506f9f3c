import MemoryCache

/// policy-hit-ratio-TRACE-SIZE: the hit ratio of a MemoryCache with the W-TinyLFU policy (one shard, and
/// four as an extra) on the trace suite of ``PolicyTrace/suite(keyCount:length:capacities:)`` — Zipf 0.99
/// and 0.8, scans, a moving popular set at every size; at each size a loop 20% larger than the cache, alone
/// and mixed with Zipf, a trace that changes class halfway, a working set that slides and keys reused within
/// about a cache size — against reference simulations of LRU and
/// SIEVE on the same requests. Every request is a get, and a miss stores the key.
///
/// The baseline is the better of the two references; the row's target is to be within 1 point of it
/// and never more than 1 point below LRU. The targets are against libcachesim's four policies
/// (LRU, W-TinyLFU, S3-FIFO, SIEVE) on the same trace files: `Benchmarks/policy_compare.py` replays them
/// and prints both tables side by side, recorded in `Docs/MemoryCache.md`.
///
/// W-TinyLFU's figures depend on the key hashes (its sketch, its ghosts and, with four shards, which shard
/// holds which key), which Swift seeds per process: `--hash-seeds N` replays each W-TinyLFU figure with N
/// key-hash seeds (``SeededKey``) and reports the median, the lowest and the highest as extras. Run under
/// `SWIFT_DETERMINISTIC_HASHING=1` the seeds, and so every figure, are the same from run to run.
///
/// policy-hit-ratio-curve (full runs only): hit ratios on the Zipf(0.99) trace at cache sizes from 250 to
/// 50,000 entries, as extras named `POLICY@SIZE`, which `Benchmarks/plot_hit_ratio.py` draws.
enum PolicyHitRatio {
    /// 1%, 3% and 10% of the keys of a full run.
    static let capacities = [1_000, 3_000, 10_000]
    static let curveCapacities = [250, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000]
    /// The shard count of the sharded figure beside each row.
    static let shardedCount = 4

    static func traces(_ context: RunContext) -> [PolicyTrace] {
        // --quick (CI) replays a quarter of each trace over a quarter of the keys.
        PolicyTrace.suite(
            keyCount: context.size(full: 100_000, quick: 25_000),
            length: context.size(full: 1_000_000, quick: 250_000), capacities: capacities)
    }

    static let traceKinds = ["zipf0.99", "zipf0.8", "scan", "moving", "loop", "loopzipf", "shift", "sliding", "reuse"]

    static let scenario = Scenario(
        names: traceKinds.flatMap { trace in
            capacities.map { "policy-hit-ratio-\(trace)-\($0 / 1000)k" }
        } + ["policy-hit-ratio-curve"]
    ) { context in
        try expect(
            ReferenceLRU.agreesWithNaiveLRU(
                on: ZipfTrace.make(keyCount: 500, length: 20_000, exponent: 0.99, seed: 1), capacity: 64),
            "the reference LRU disagrees with a naive LRU")
        var results: [ScenarioResult] = []
        let traces = traces(context)
        for trace in traces {
            for capacity in trace.capacity.map({ [$0] }) ?? capacities {
                let oneShard = try seededHitRatios(capacity: capacity, on: trace.keys, seeds: context.hashSeeds)
                let tinyLFU = oneShard.median
                let lru = referenceLRU(capacity: capacity, on: trace.keys)
                let memoryLRU = try hitRatio(of: .leastRecentlyUsed, capacity: capacity, on: trace.keys)
                let sieve = referenceSIEVE(capacity: capacity, on: trace.keys)
                let shardedSummary = try seededHitRatios(
                    capacity: capacity, on: trace.keys, seeds: context.hashSeeds, shardCount: shardedCount)
                let sharded = shardedSummary.median
                let best = max(lru, sieve)
                results.append(
                    ScenarioResult(
                        name: "policy-hit-ratio-\(trace.kind)-\(capacity / 1000)k",
                        unit: .percentHits,
                        strata: Summary(exactly: tinyLFU),
                        baseline: Summary(exactly: best),
                        ratio: tinyLFU / best,
                        target: Target(description: "≥ best reference − 1 pt, ≥ LRU − 1 pt") {
                            $0.strata.median >= best - 1 && $0.strata.median >= lru - 1
                        },
                        extras: [
                            ("reference LRU % hits", lru),
                            ("reference SIEVE % hits", sieve),
                            ("MemoryCache LRU % hits", memoryLRU),
                            ("W-TinyLFU % hits at shardCount \(shardedCount)", sharded),
                        ]
                            + (context.hashSeeds > 1
                                ? [
                                    ("W-TinyLFU lowest over \(context.hashSeeds) seeds", oneShard.minimum),
                                    ("W-TinyLFU highest over \(context.hashSeeds) seeds", oneShard.maximum),
                                    ("W-TinyLFU lowest at shardCount \(shardedCount)", shardedSummary.minimum),
                                    ("W-TinyLFU highest at shardCount \(shardedCount)", shardedSummary.maximum),
                                ] : []),
                        notes: [
                            "strata = MemoryCache(policy: .windowTinyLFU), baseline = the better of reference LRU and SIEVE; "
                                + "\(trace.description), \(trace.keys.count) requests, capacity \(capacity)"
                        ]
                    )
                )
            }
        }
        if !context.quick, let zipf = traces.first {
            var extras: [(label: String, value: Double)] = []
            for capacity in curveCapacities {
                extras.append(("lru@\(capacity)", referenceLRU(capacity: capacity, on: zipf.keys)))
                extras.append(("sieve@\(capacity)", referenceSIEVE(capacity: capacity, on: zipf.keys)))
                extras.append(
                    ("windowTinyLFU@\(capacity)", try hitRatio(of: .windowTinyLFU, capacity: capacity, on: zipf.keys)))
                extras.append(
                    (
                        "leastRecentlyUsed@\(capacity)",
                        try hitRatio(of: .leastRecentlyUsed, capacity: capacity, on: zipf.keys)
                    ))
            }
            let tinyLFU = extras.first { $0.label == "windowTinyLFU@10000" }?.value ?? 0
            let lru = extras.first { $0.label == "lru@10000" }?.value ?? 1
            results.append(
                ScenarioResult(
                    name: "policy-hit-ratio-curve",
                    unit: .percentHits,
                    strata: Summary(exactly: tinyLFU),
                    baseline: Summary(exactly: lru),
                    ratio: tinyLFU / lru,
                    target: .none,
                    extras: extras,
                    notes: ["Zipf(0.99) at sizes \(curveCapacities); the row's figures are W-TinyLFU and LRU at 10,000"]
                )
            )
        }
        return results
    }

    /// The percentage of gets that hit in a MemoryCache with `policy` replaying `keys`.
    static func hitRatio(
        of policy: EvictionPolicy, capacity: Int, on keys: [Int], shardCount: Int = 1
    ) throws -> Double {
        try hitRatio(of: policy, capacity: capacity, on: keys, shardCount: shardCount) { $0 }
    }

    /// W-TinyLFU's hit ratios replaying `keys` with key-hash seeds `0..<seeds`, summarized.
    static func seededHitRatios(capacity: Int, on keys: [Int], seeds: Int, shardCount: Int = 1) throws -> Summary {
        Summary(
            try (0..<seeds).map { seed in
                try hitRatio(of: .windowTinyLFU, capacity: capacity, on: keys, shardCount: shardCount) {
                    SeededKey(key: $0, seed: seed)
                }
            })
    }

    /// The percentage of gets that hit in a MemoryCache with `policy` replaying `keys`, each made a cache key
    /// by `makeKey`.
    static func hitRatio<Key: Hashable & Sendable>(
        of policy: EvictionPolicy, capacity: Int, on keys: [Int], shardCount: Int, makeKey: (Int) -> Key
    ) throws -> Double {
        let cache = try MemoryCache<Key, Int>(countLimit: capacity, shardCount: shardCount, policy: policy)
        var hits = 0
        for key in keys {
            let cacheKey = makeKey(key)
            if cache.value(forKey: cacheKey) != nil {
                hits += 1
            } else {
                try cache.setValue(key, forKey: cacheKey)
            }
        }
        return Double(hits) / Double(keys.count) * 100
    }

    static func referenceLRU(capacity: Int, on keys: [Int]) -> Double {
        var reference = ReferenceLRU(capacity: capacity)
        var hits = 0
        for key in keys where reference.access(key) { hits += 1 }
        return Double(hits) / Double(keys.count) * 100
    }

    static func referenceSIEVE(capacity: Int, on keys: [Int]) -> Double {
        var reference = ReferenceSIEVE(capacity: capacity)
        var hits = 0
        for key in keys where reference.access(key) { hits += 1 }
        return Double(hits) / Double(keys.count) * 100
    }
}

/// A trace key hashed together with a seed: the same key under another seed lands on other sketch
/// counters, ghost bits and shards, as it would in another process. Equality ignores nothing: two keys
/// are equal only with the same seed, and a run uses one seed.
struct SeededKey: Hashable, Sendable {
    let key: Int
    let seed: Int

    func hash(into hasher: inout Hasher) {
        hasher.combine(seed)
        hasher.combine(key)
    }
}

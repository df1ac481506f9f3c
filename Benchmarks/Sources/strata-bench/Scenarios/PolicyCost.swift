import Dispatch
import MemoryCache

/// The price of the W-TinyLFU policy, each against the LRU policy measured in the same run:
///
/// - policy-get-hit: hits on 100k String keys in random order, both caches at a count limit of 100k (so
///   nothing is evicted); the W-TinyLFU hit also counts the use in the sketch.
/// - policy-set-evict: inserting keys the cache does not hold into a cache full at 10k entries, as
///   memory-set-evict does; W-TinyLFU also duels the candidate against a victim and remembers the loser.
/// - policy-concurrent: memory-concurrent's workload (2 threads, 64 shards, 90% gets) on a W-TinyLFU
///   cache, against the same work on one thread.
///
/// Each row's ratio is the median of per-round ratios, not the ratio of medians, so that load from other
/// processes on a shared machine lands on both sides of a ratio alike (see `PolicyCost+PairedRounds.swift`).
enum PolicyCost {
    static let getHit = Scenario("policy-get-hit") { context in
        let keyCount = 100_000
        let keys = (0..<keyCount).map { "key-\($0)" }
        let lookups = [Int].shuffledIndices(keyCount, seed: 0x6E7).map { keys[$0] }
        let tinyLFU = try MemoryCache<String, Int>(countLimit: keyCount, policy: .windowTinyLFU)
        let lru = try MemoryCache<String, Int>(countLimit: keyCount, policy: .leastRecentlyUsed)
        for (index, key) in keys.enumerated() {
            try tinyLFU.setValue(index, forKey: key)
            try lru.setValue(index, forKey: key)
        }
        let rounds = pairedRounds(context, full: 101)
        let loadBefore = loadAverage()
        var (strataWall, baselineWall) = ([Double](), [Double]())
        let (strata, baseline) = interleave(
            rounds,
            strata: { hitPass(lookups, on: tinyLFU, wallClock: &strataWall) },
            baseline: { hitPass(lookups, on: lru, wallClock: &baselineWall) }
        )
        let ratios = perRoundRatios(strata, baseline, higherIsBetter: false)
        let wallRatios = perRoundRatios(
            Summary(strataWall.suffix(rounds.rounds)), Summary(baselineWall.suffix(rounds.rounds)),
            higherIsBetter: false)
        return [
            ScenarioResult(
                name: "policy-get-hit",
                unit: .nanosecondsPerOperation,
                strata: strata,
                baseline: baseline,
                ratio: ratios.median,
                target: .ratioAtMost(1.3),
                extras: pairedExtras(ratios, loadBefore: loadBefore, loadAfter: loadAverage())
                    + [("wall-clock per-round ratio: median", wallRatios.median)],
                notes: [
                    "strata = .windowTinyLFU, baseline = .leastRecentlyUsed; \(keyCount) String keys, count limit "
                        + "\(keyCount), one pass over every key in seeded random order per round",
                    pairedNote(rounds, cpuTime: true),
                ]
            )
        ]
    }

    static let setEvict = Scenario("policy-set-evict") { context in
        let countLimit = MemorySetEvict.countLimit
        let ring = SetEvictWorkload(context: context, countLimit: countLimit)
        let tinyLFU = try MemoryCache<String, Int>(countLimit: countLimit, policy: .windowTinyLFU)
        let lru = try MemoryCache<String, Int>(countLimit: countLimit, policy: .leastRecentlyUsed)
        var tinyLFUPosition = try ring.prefill { try tinyLFU.setValue($1, forKey: $0) }
        var lruPosition = try ring.prefill { try lru.setValue($1, forKey: $0) }
        let rounds = pairedRounds(context)
        let loadBefore = loadAverage()
        var (strataWall, baselineWall) = ([Double](), [Double]())
        let (strata, baseline) = try interleave(
            rounds,
            strata: {
                try cpuNanosecondsPerOperation(ring.batch, wallClock: &strataWall) {
                    for _ in 0..<ring.batch {
                        try tinyLFU.setValue(tinyLFUPosition, forKey: ring.key(at: tinyLFUPosition))
                        tinyLFUPosition += 1
                    }
                }
            },
            baseline: {
                try cpuNanosecondsPerOperation(ring.batch, wallClock: &baselineWall) {
                    for _ in 0..<ring.batch {
                        try lru.setValue(lruPosition, forKey: ring.key(at: lruPosition))
                        lruPosition += 1
                    }
                }
            }
        )
        let ratios = perRoundRatios(strata, baseline, higherIsBetter: false)
        let wallRatios = perRoundRatios(
            Summary(strataWall.suffix(rounds.rounds)), Summary(baselineWall.suffix(rounds.rounds)),
            higherIsBetter: false)
        return [
            ScenarioResult(
                name: "policy-set-evict",
                unit: .nanosecondsPerOperation,
                strata: strata,
                baseline: baseline,
                ratio: ratios.median,
                target: .ratioAtMost(1.5),
                extras: pairedExtras(ratios, loadBefore: loadBefore, loadAfter: loadAverage())
                    + [("wall-clock per-round ratio: median", wallRatios.median)],
                notes: [
                    "strata = .windowTinyLFU, baseline = .leastRecentlyUsed; count limit \(countLimit), "
                        + "\(ring.batch) inserts of keys not held per round",
                    pairedNote(rounds, cpuTime: true),
                ]
            )
        ]
    }

    static let concurrent = Scenario("policy-concurrent") { context in
        let keyCount = 100_000
        let threadCount = 2
        let operationsPerThread = context.size(full: 500_000, quick: 100_000)
        let keys = (0..<keyCount).map { "key-\($0)" }
        let sequences = (0..<threadCount).map { thread in
            [Int].randomIndices(operationsPerThread, below: keyCount, seed: 0xC0C0 + UInt64(thread))
                .map { keys[$0] }
        }
        let cache = try MemoryCache<String, Int>(
            countLimit: keyCount, shardCount: MemoryConcurrent.shardCount, policy: .windowTinyLFU)
        for (index, key) in keys.enumerated() { try cache.setValue(index, forKey: key) }
        let totalOperations = Double(threadCount * operationsPerThread)
        let loadBefore = loadAverage()
        let (strata, baseline) = interleave(
            context.alternatingRounds,
            strata: {
                let elapsed = measureNanoseconds {
                    DispatchQueue.concurrentPerform(iterations: threadCount) {
                        MemoryConcurrent.replay(sequences[$0], on: cache)
                    }
                }
                return totalOperations / elapsed * 1e3
            },
            baseline: {
                let elapsed = measureNanoseconds {
                    for sequence in sequences { MemoryConcurrent.replay(sequence, on: cache) }
                }
                return totalOperations / elapsed * 1e3
            }
        )
        let headroom = MemoryConcurrent.parallelHeadroom(
            rounds: context.alternatingRounds, iterations: context.size(full: 5_000_000, quick: 1_000_000))
        let ratios = perRoundRatios(strata, baseline, higherIsBetter: true)
        let limit = 1 / 1.3
        return [
            ScenarioResult(
                name: "policy-concurrent",
                unit: .millionOperationsPerSecond,
                strata: strata,
                baseline: baseline,
                ratio: ratios.median,
                target: Target(description: "2 threads ≥ 1.3× (ratio ≤ 0.77)") { $0.ratio <= limit },
                extras: [
                    ("speed-up, 2 threads over 1 (median of per-round speed-ups)", 1 / ratios.median),
                    ("machine headroom: spin loops, 2 threads over 1", headroom),
                ] + pairedExtras(ratios, loadBefore: loadBefore, loadAfter: loadAverage()),
                notes: [
                    "strata = 2 threads, baseline = 1 thread, one .windowTinyLFU cache of shardCount "
                        + "\(MemoryConcurrent.shardCount); \(keyCount) String keys, 90% get / 10% set",
                    pairedNote(context.alternatingRounds, cpuTime: false)
                        + " (ratio here = 1-thread time over 2-thread time per round: ≤ 0.77 means ≥ 1.3×)",
                ]
            )
        ]
    }

    @inline(never)
    static func hitPass(_ lookups: [String], on cache: MemoryCache<String, Int>, wallClock: inout [Double]) -> Double {
        cpuNanosecondsPerOperation(lookups.count, wallClock: &wallClock) {
            var sum = 0
            for key in lookups { sum &+= cache.value(forKey: key) ?? 0 }
            blackHole(sum)
        }
    }
}

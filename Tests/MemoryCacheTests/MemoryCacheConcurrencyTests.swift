import CacheCore
import CacheTesting
import Dispatch
import Foundation
import StrataTestSupport
import Testing

@testable import MemoryCache

/// Runs under ThreadSanitizer in CI: `swift test --sanitize=thread --filter MemoryCacheConcurrencyTests`.
@Suite struct MemoryCacheConcurrencyTests {
    /// Operations per thread, scaled by `STRATA_STRESS_SCALE` (CI runs 0.2 under ThreadSanitizer, which slows
    /// each lock a lot).
    static let operationsPerThread = StressScale.scaled(100_000)

    @Test func concurrentInsertsLeaveEveryKeyWithOneOfItsValues() throws {
        let cache = try MemoryCache<Int, Int>()
        // Given 1,000 writes spread over 10 keys from many threads; write `i` goes to key `i % 10`
        DispatchQueue.concurrentPerform(iterations: 1_000) { index in
            try? cache.setValue(index, forKey: index % 10)
        }
        // Then every key holds a value that was written for it
        #expect(cache.count == 10)
        for key in 0..<10 {
            let value = try #require(cache[key])
            #expect(value % 10 == key)
        }
        #expect(cache.statistics.insertions == 1_000)
        #expect(cache.checkInvariants())
    }

    @Test(arguments: [1, 4], [EvictionPolicy.leastRecentlyUsed, .windowTinyLFU])
    func mixedOperationsKeepLimitsAndStructure(shardCount: Int, policy: EvictionPolicy) throws {
        let cache = try MemoryCache<Int, Int>(
            countLimit: 1_000, costLimit: 20_000, shardCount: shardCount, policy: policy, cost: { $0 % 50 })
        let operations = Self.operationsPerThread
        let batch = 1_000
        let violations = LockedViolations()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            var random = SplitMix64(seed: UInt64(thread + 1))
            for start in stride(from: 0, to: operations, by: batch) {
                for step in start..<min(start + batch, operations) {
                    let key = Int(random.next(upperBound: 4_000 as UInt64))
                    switch random.next(upperBound: 1_000 as UInt64) {
                    case 0..<500: _ = cache[key]
                    case 500..<900: try? cache.setValue(step, forKey: key)
                    case 900..<999: cache.removeValue(forKey: key)
                    default: cache.removeAll()
                    }
                }
                if let problem = cache.invariantViolation() { violations.record(problem) }
                if cache.count > 1_000 || cache.totalCost > 20_000 { violations.record("limits exceeded") }
            }
        }
        #expect(violations.all.isEmpty)
        #expect(cache.count <= 1_000)
        #expect(cache.totalCost <= 20_000)
        let stats = cache.statistics
        #expect(stats.hits + stats.misses > 0)
    }

    /// The W-TinyLFU hit buffer counts the hits it holds: under threads that race on the same shards,
    /// no hit may be lost or counted twice, and the policy's queues stay consistent.
    @Test(arguments: [1, 4])
    func frequencyPolicyCountsEveryConcurrentHit(shardCount: Int) throws {
        let cache = try MemoryCache<Int, Int>(countLimit: 500, shardCount: shardCount, policy: .windowTinyLFU)
        for key in 0..<200 { try cache.setValue(key, forKey: key) }
        let threads = 4
        let readsPerThread = Self.operationsPerThread
        let violations = LockedViolations()
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var random = SplitMix64(seed: UInt64(thread + 7))
            for read in 0..<readsPerThread {
                let key = Int(random.next(upperBound: 200 as UInt64))
                if cache[key] != key { violations.record("key \(key) missed or held another value") }
                if read % 997 == 0, let problem = cache.invariantViolation() { violations.record(problem) }
            }
        }
        #expect(violations.all.isEmpty)
        #expect(cache.statistics.hits == threads * readsPerThread)
        #expect(cache.statistics.misses == 0)
        #expect(cache.checkInvariants())
    }

    /// Every read's outcome is tallied by the thread that made it: with writes, removals, tag removals,
    /// expiry, trims, memory pressure and `removeAll()` racing the reads (each of which applies the hit
    /// buffer of the shard it touches), the statistics must still count exactly the hits and misses seen.
    @Test(arguments: [1, 4, 64], [EvictionPolicy.windowTinyLFU, .leastRecentlyUsed])
    func statisticsCountExactlyTheHitsAndMissesSeenUnderMixedOperations(
        shardCount: Int, policy: EvictionPolicy
    ) throws {
        let clock = ManualClock()
        let cache = try MemoryCache<Int, Int>(
            countLimit: 256, costLimit: 4_096, shardCount: shardCount, policy: policy, clock: clock)
        let threads = 4
        let operations = Self.operationsPerThread / 4
        let tallies = Locked((hits: 0, misses: 0))
        let violations = LockedViolations()
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var random = SplitMix64(seed: UInt64(thread &* 31 &+ shardCount))
            var hits = 0
            var misses = 0
            for step in 0..<operations {
                let key = Int(random.next(upperBound: 300 as UInt64))
                switch random.next(upperBound: 1_000 as UInt64) {
                case 0..<550:
                    if cache[key] != nil { hits += 1 } else { misses += 1 }
                case 550..<600:
                    let found = cache.entries(forKeys: [key, key + 1, key])
                    hits += found.count
                    misses += 2 - found.count
                case 600..<620:
                    // Every entry here is fresh or gone (none is kept for stale reads): a hit or a miss.
                    if cache.entryIncludingStale(forKey: key) != nil { hits += 1 } else { misses += 1 }
                case 620..<850:
                    let expiry: Expiry? = step % 5 == 0 ? .seconds(Double(step % 7)) : nil
                    try? cache.setValue(step, forKey: key, expiry: expiry, cost: step % 40)
                case 850..<900:
                    try? cache.setValue(step, forKey: key, tags: ["t\(key % 3)"])
                case 900..<960: cache.removeValue(forKey: key)
                case 960..<970: cache.removeAll(taggedWith: "t\(key % 3)")
                case 970..<980: clock.advance(by: 1)
                case 980..<985: cache.trim(toCount: key)
                case 985..<990: cache.trim(toCost: key * 10)
                case 990..<993: cache.respondToMemoryPressure(.warning)
                case 993..<998: _ = cache.removeExpired()
                default: cache.removeAll()
                }
                if step % 4_999 == 0, let problem = cache.invariantViolation() { violations.record(problem) }
            }
            tallies.withLock { $0 = ($0.hits + hits, $0.misses + misses) }
        }
        #expect(violations.all.isEmpty)
        let seen = tallies.value
        #expect(seen.hits > 0)
        #expect(cache.statistics.hits == seen.hits)
        #expect(cache.statistics.misses == seen.misses)
        #expect(cache.checkInvariants())
    }

    @Test func concurrentReadersAndAnExpiringWriterAgree() throws {
        let cache = try MemoryCache<Int, Int>(countLimit: 100, defaultExpiry: .seconds(3_600))
        for key in 0..<100 { try cache.setValue(key, forKey: key) }
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for step in 0..<(Self.operationsPerThread / 10) {
                let key = step % 100
                if thread == 0 {
                    try? cache.setValue(key, forKey: key)
                } else if let value = cache[key] {
                    #expect(value == key)
                }
            }
        }
        #expect(cache.count == 100)
        #expect(cache.checkInvariants())
    }
}

/// Collects invariant violations seen by worker threads.
final class LockedViolations: Sendable {
    private let problems = Locked<[String]>([])

    func record(_ problem: String) { problems.withLock { $0.append(problem) } }

    var all: [String] { problems.value }
}

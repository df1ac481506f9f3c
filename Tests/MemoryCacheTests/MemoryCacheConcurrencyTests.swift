import CacheCore
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

import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import Testing

@testable import MultiCache

/// Adversarial probes of the tier-0 fast path: a MultiCache over a concrete MemoryCache (read without
/// `await`, hits counted by an atomic) must behave exactly like one over the same cache behind
/// `any Cache`, under bad input, expiry boundaries, removals, cancellation and concurrency.
@Suite(.timeLimit(.minutes(1)))
struct MultiCacheTierZeroProbeTests {
    /// A memory tier 0 (capped at 5 s) over a fault-injecting slow tier, on one manual clock.
    struct Setup {
        let clock: ManualClock
        let memory: MemoryCache<String, Int>
        let slow: FaultInjectingCache<String, Int>
        let cache: MultiCache<String, Int>

        init(erased: Bool, clock: ManualClock) throws {
            self.clock = clock
            memory = try MemoryCache(countLimit: 4, clock: clock)
            slow = FaultInjectingCache(clock: clock)
            let first: MultiCache<String, Int>.Tier
            if erased {
                let anyMemory: any Cache<String, Int> = memory
                first = .init(anyMemory, name: "memory", maximumLifetime: .seconds(5))
            } else {
                first = .init(memory, name: "memory", maximumLifetime: .seconds(5))
            }
            cache = try MultiCache(tiers: [first, .init(slow, name: "slow")])
        }
    }

    /// One observable outcome of a step, compared between the two setups.
    struct Outcome: Equatable, CustomStringConvertible {
        var result: String
        var memory: String
        var statistics: MultiCacheStatistics

        var description: String { "\(result) | memory \(memory) | \(statistics)" }
    }

    static func describe(_ entry: CacheEntry<Int>?) -> String {
        guard let entry else { return "nil" }
        return "\(entry.value)@\(entry.expiresAt?.timeIntervalSinceReferenceDate.description ?? "never")"
    }

    /// Runs one step on a setup and reports what it returned, what memory holds for "k", and the counters.
    static func run(_ step: Int, on setup: Setup) async -> Outcome {
        let result: String
        do {
            switch step % 12 {
            case 0: result = describe(try await setup.cache.entry(forKey: "k"))
            case 1:
                try await setup.cache.setValue(step, forKey: "k", expiry: .after(.seconds(Double(step % 7) + 0.5)))
                result = "set"
            case 2:
                try await setup.slow.setValue(-step, forKey: "k", expiry: .after(.seconds(Double(step % 11))))
                result = "slow set"
            case 3:
                setup.clock.advance(by: .milliseconds(500))
                result = "tick"
            case 4: result = describe(try await setup.cache.entry(forKey: "k"))
            case 5:
                try await setup.cache.removeEntry(forKey: "k")
                result = "removed"
            case 6:
                setup.slow.failNext(.entry)
                result = describe(try await setup.cache.entry(forKey: "k"))
            case 7: result = "\(try await setup.cache.value(forKey: "k", expiry: .seconds(3)) { step * 100 })"
            case 8:
                // A read by a task that is already cancelled
                let task = Task { () async throws -> CacheEntry<Int>? in
                    withUnsafeCurrentTask { $0?.cancel() }
                    return try await setup.cache.entry(forKey: "k")
                }
                result = describe(try await task.value)
            case 9:
                setup.clock.advance(by: .seconds(Double(step % 3)))
                result = describe(try await setup.cache.entry(forKey: "k"))
            case 10:
                if step % 5 == 0 { try await setup.cache.removeAll() }
                result = describe(try await setup.cache.entry(forKey: "other\(step % 6)"))
            default:
                try await setup.cache.setValue(step, forKey: "other\(step % 6)", expiry: .never)
                result = "set other"
            }
        } catch {
            result = "threw \(error)"
        }
        return Outcome(
            result: result, memory: describe(setup.memory.entry(forKey: "k")), statistics: setup.cache.statistics)
    }

    @Test func concreteAndErasedMemoryTiersAgreeStepByStep() async throws {
        // Given the same tiers twice, tier 0 once concrete (read at once) and once behind `any Cache`
        let fast = try Setup(erased: false, clock: ManualClock())
        let slow = try Setup(erased: true, clock: ManualClock())
        #expect(fast.cache.tiers[0].readAtOnce != nil && slow.cache.tiers[0].readAtOnce == nil)

        // When both run the same mix of reads at expiry boundaries, write-backs, failures, removals,
        // loads, cancelled reads and wipes
        var random = SeededGenerator(seed: 5)
        for index in 0..<600 {
            let step = Int(random.next(upperBound: 1_000 as UInt64))
            let expected = await Self.run(step, on: slow)
            let actual = await Self.run(step, on: fast)
            // Then every answer, memory's copy and every counter agree
            #expect(actual == expected, "step \(index) (\(step))")
            if actual != expected { return }
        }
        let statistics = fast.cache.statistics
        #expect(statistics.tiers[0].hits > 0 && statistics.tiers[1].hits > 0 && statistics.tiers[0].writeBacks > 0)
        #expect(statistics.tiers[1].errors > 0 && statistics.misses > 0 && statistics.loadsRun > 0)
    }

    @Test func writeBackCarriesTheRemainingLifetimeCappedByTheTierAndExpiresOnTheBoundary() async throws {
        // Given a value in the slow tier that expires at t0 + 10 s, read at t0 + 4 s
        let clock = ManualClock()
        let setup = try Setup(erased: false, clock: clock)
        let start = clock.now
        try await setup.slow.setValue(1, forKey: "k", expiry: .after(.seconds(10)))
        clock.advance(by: .seconds(4))
        #expect(try await setup.cache.value(forKey: "k") == 1)
        // Then memory's copy expires at the earlier of t0 + 10 and t0 + 4 + 5 (its maximum lifetime)
        #expect(setup.memory.entry(forKey: "k")?.expiresAt == start.addingTimeInterval(9))
        // And it answers up to just before that instant, and not at it
        clock.advance(by: .seconds(4.999))
        #expect(try await setup.cache.value(forKey: "k") == 1)
        #expect(setup.cache.statistics.tiers.map(\.hits) == [1, 1])
        clock.advance(by: .milliseconds(1))
        #expect(setup.memory.entry(forKey: "k") == nil)
        #expect(try await setup.cache.entry(forKey: "k")?.expiresAt == start.addingTimeInterval(10))
        #expect(setup.cache.statistics.tiers.map(\.hits) == [1, 2])
        #expect(setup.cache.statistics.tiers.map(\.writeBacks) == [2, 0])
    }

    @Test func singleTierCountsHitsMissesAndTheHitRatio() async throws {
        // Given a MultiCache over one concrete MemoryCache
        let memory = try MemoryCache<String, Int>(clock: ManualClock())
        let cache = try MultiCache<String, Int>(tiers: [.init(memory)])
        #expect(cache.tiers[0].readAtOnce != nil)
        // When it misses once, stores, then hits three times
        #expect(try await cache.value(forKey: "k") == nil)
        try await cache.setValue(1, forKey: "k", expiry: .never)
        for _ in 0..<3 { #expect(try await cache.value(forKey: "k") == 1) }
        // Then the counts and the ratio are exact
        let statistics = cache.statistics
        #expect(statistics.tiers[0].hits == 3 && statistics.tiers[0].misses == 1)
        #expect(statistics.hits == 3 && statistics.misses == 1)
        #expect(statistics.hitRatio == 0.75)
    }

    @Test func nestedMultiCacheOverAConcreteMemoryTierWritesBackIntoIt() async throws {
        // Given an outer MultiCache whose tier 0 is an inner MultiCache over a concrete MemoryCache
        let clock = ManualClock()
        let memory = try MemoryCache<String, Int>(clock: clock)
        let inner = try MultiCache<String, Int>(tiers: [.init(memory, name: "memory")])
        let slow = FaultInjectingCache<String, Int>(clock: clock)
        let outer = try MultiCache<String, Int>(tiers: [.init(inner, name: "inner"), .init(slow, name: "slow")])
        // (a MultiCache is not a SynchronousCache: the outer reads it through `async`)
        #expect(outer.tiers[0].readAtOnce == nil && inner.tiers[0].readAtOnce != nil)
        try await slow.setValue(7, forKey: "k", expiry: .after(.seconds(10)))

        // When the outer cache reads twice
        #expect(try await outer.value(forKey: "k") == 7)
        #expect(try await outer.value(forKey: "k") == 7)

        // Then the first read was written back into the inner cache's memory, which answered the second
        #expect(memory.entry(forKey: "k")?.value == 7)
        #expect(outer.statistics.tiers.map(\.hits) == [1, 1])
        #expect(inner.statistics.tiers[0].hits == 1 && inner.statistics.tiers[0].misses == 1)
        #expect(slow.callCount(.entry) == 1)
    }

    // MARK: - How users build tiers

    @Test func everyWayOfBuildingAMemoryTierPicksTheFastPathWhereItsTypeIsKnown() throws {
        let memory = try MemoryCache<String, Int>()
        let slow = FaultInjectingCache<String, Int>()
        // A concrete cache, by type or in an array literal
        #expect(MultiCache<String, Int>.Tier(memory).readAtOnce != nil)
        let tiers: [MultiCache<String, Int>.Tier] = [.init(memory, maximumLifetime: .seconds(1)), .init(slow)]
        #expect(tiers[0].readAtOnce != nil && tiers[1].readAtOnce == nil)
        #expect(try MultiCache<String, Int>(tiers: tiers).tiers[0].readAtOnce != nil)
        // A cache typed as `any SynchronousCache` is opened and still read at once
        let synchronous: any SynchronousCache<String, Int> = memory
        #expect(MultiCache<String, Int>.Tier(synchronous).readAtOnce != nil)
        // The convenience initializer over `[any Cache]` (the documented shortest form) finds the
        // memory tier's synchronous read too
        #expect(try MultiCache<String, Int>([memory, slow]).tiers[0].readAtOnce != nil)
    }

    // MARK: - Removals racing reads

    enum Removal: String, CaseIterable, CustomStringConvertible {
        case removeEntry, removeAll
        var description: String { rawValue }

        func perform(on cache: MultiCache<String, Int>) async throws {
            switch self {
            case .removeEntry: try await cache.removeEntry(forKey: "k")
            case .removeAll: try await cache.removeAll()
            }
        }
    }

    @Test(arguments: Removal.allCases)
    func removalWhileATierZeroMissReadsTheSlowTierKeepsTheOldValueOutOfMemory(_ removal: Removal) async throws {
        // Given a value only in a slow tier whose read is parked after its lookup, behind a concrete
        // memory tier 0 that a read has just missed
        let clock = ManualClock()
        let memory = try MemoryCache<String, Int>(clock: clock)
        let slow = SlowReadingTier<Int>(clock: clock)
        let cache = try MultiCache<String, Int>(tiers: [.init(memory), .init(slow)])
        try await slow.storage.setValue(1, forKey: "k", expiry: .never)
        slow.latch.hold(.entry)
        let reader = Task { try await cache.value(forKey: "k") }
        await slow.latch.waitUntilHeld(.entry)

        // When the key is removed, then the slow read answers with the old value
        try await removal.perform(on: cache)
        slow.latch.release(.entry)

        // Then the reader gets the value it read, but it is written back nowhere: it never comes back
        #expect(try await reader.value == 1)
        #expect(memory.entry(forKey: "k") == nil)
        #expect(try await cache.value(forKey: "k") == nil)
        #expect(cache.statistics.tiers[0].writeBacks == 0)
    }

    @Test(arguments: Removal.allCases)
    func removalDuringALoadBehindAConcreteMemoryTierKeepsTheLoadedValueOut(_ removal: Removal) async throws {
        // Given a load-once caller whose loader is held open, over a concrete memory tier
        let clock = ManualClock()
        let memory = try MemoryCache<String, Int>(clock: clock)
        let slow = FaultInjectingCache<String, Int>(clock: clock)
        let cache = try MultiCache<String, Int>(tiers: [.init(memory), .init(slow)])
        let gate = Gate()
        let started = Counter()
        let caller = Task {
            try await cache.value(forKey: "k", expiry: .never) {
                started.increment()
                try await gate.wait()
                return 1
            }
        }
        try await waitUntil { started.value == 1 }

        // When the key is removed while the loader runs
        try await removal.perform(on: cache)
        gate.open()

        // Then the caller gets the loaded value, but neither tier keeps it
        #expect(try await caller.value == 1)
        #expect(memory.entry(forKey: "k") == nil)
        #expect(try await slow.value(forKey: "k") == nil)
        #expect(try await cache.value(forKey: "k") == nil)
    }

    // MARK: - Statistics under concurrency

    @Test func concurrentReadsAcrossTiersAreCountedExactly() async throws {
        // Given 40 keys: 0..<10 in memory, 10..<30 only in the slow tier, 30..<40 nowhere
        let clock = ManualClock()
        let memory = try MemoryCache<String, Int>(shardCount: 8, clock: clock)
        let slow = FaultInjectingCache<String, Int>(clock: clock)
        let cache = try MultiCache<String, Int>(tiers: [.init(memory), .init(slow)])
        for key in 0..<10 { memory.setValue(key, forKey: "\(key)") }
        for key in 10..<30 { try await slow.setValue(key, forKey: "\(key)", expiry: .never) }

        // When 8 tasks read them 400 times each
        let (reads, found) = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for task in 0..<8 {
                group.addTask {
                    var found = 0
                    for read in 0..<400 {
                        let key = (task * 7 + read * 3) % 40
                        let value = try await cache.value(forKey: "\(key)")
                        if value != nil { found += 1 }
                        if value != (key < 30 ? key : nil) {
                            Issue.record("key \(key) read \(String(describing: value))")
                        }
                    }
                    return (400, found)
                }
            }
            return try await group.reduce(into: (0, 0)) {
                $0.0 += $1.0; $0.1 += $1.1
            }
        }

        // Then every read was counted once, every tier-1 hit wrote back once, and the parts add up
        let statistics = cache.statistics
        #expect(reads == 3_200 && found == 2_400)
        #expect(statistics.hits == found && statistics.hits + statistics.misses == reads)
        #expect(statistics.tiers[0].hits + statistics.tiers[0].misses == reads)
        #expect(statistics.tiers[1].hits + statistics.tiers[1].misses == statistics.tiers[0].misses)
        #expect(statistics.tiers[0].hits + statistics.tiers[1].hits == statistics.hits)
        #expect(statistics.tiers[1].misses == statistics.misses)
        // (concurrent readers of one key write back once: a write-back is skipped while another store
        // of the key is running)
        #expect(statistics.tiers[0].writeBacks >= 20 && statistics.tiers[0].writeBacks <= statistics.tiers[1].hits)
        #expect(statistics.tiers.map(\.errors) == [0, 0])
        // And once the reads are over, memory holds every key the slow tier answered
        let missing = (10..<30).filter { key in memory.entry(forKey: String(key))?.value != key }
        #expect(missing == [])
    }
}

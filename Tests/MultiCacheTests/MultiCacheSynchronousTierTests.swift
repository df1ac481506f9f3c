import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import StrataTestSupport
import Testing

@testable import MultiCache

/// A first tier that reads without suspending (a concrete MemoryCache) is read through its synchronous
/// API, on the read's fast path: its answers, statistics, write-backs and fences, how users' ways of
/// building tiers reach it, and removals racing a read or a load behind it.
@Suite(.timeLimit(.minutes(10)))
struct MultiCacheSynchronousTierTests {
    /// A MemoryCache (concrete, so read at once) over a recording slow tier, on one manual clock.
    struct MemoryOverSlow {
        let clock = ManualClock()
        let memory: MemoryCache<String, Data>
        let slow: RecordingCache<String, Data>
        let cache: MultiCache<String, Data>

        init() throws {
            memory = try MemoryCache(clock: clock)
            slow = RecordingCache(wrapping: try makeSlowTier(clock: clock))
            cache = try MultiCache(tiers: [.init(memory, name: "memory"), .init(slow, name: "disk")])
        }
    }

    /// A memory tier 0 (capped at 5 s) over a fault-injecting slow tier, on one manual clock.
    struct MemoryOverFaulty {
        let memory: MemoryCache<String, Int>
        let slow: FaultInjectingCache<String, Int>
        let cache: MultiCache<String, Int>

        init(clock: ManualClock) throws {
            memory = try MemoryCache(countLimit: 4, clock: clock)
            slow = FaultInjectingCache(clock: clock)
            cache = try MultiCache(tiers: [
                .init(memory, name: "memory", maximumLifetime: .seconds(5)), .init(slow, name: "slow"),
            ])
        }
    }

    @Test func missInMemoryReadsTheSlowTierWritesBackAndTheNextReadHitsMemory() async throws {
        // Given a value only in the slow tier
        let tiers = try MemoryOverSlow()
        try await tiers.slow.setValue(bytes("v"), forKey: "k", expiry: .after(.seconds(10)))
        tiers.clock.advance(by: .seconds(4))

        // When the MultiCache reads it twice
        let first = try await tiers.cache.entry(forKey: "k")
        let second = try await tiers.cache.entry(forKey: "k")

        // Then both reads return it; the first was written back with its own expiry and the second was
        // answered by memory without asking the slow tier again
        #expect(first?.value == bytes("v") && second?.value == bytes("v"))
        #expect(tiers.memory.entry(forKey: "k")?.expiresAt == first?.expiresAt)
        #expect(tiers.slow.calls.filter { $0.operation == .entry }.count == 1)
        let statistics = tiers.cache.statistics
        let tierStatistics = tiers.cache.tierStatistics
        #expect(tierStatistics.map(\.hits) == [1, 1])
        #expect(tierStatistics.map(\.misses) == [1, 0])
        #expect(tierStatistics.map(\.writeBacks) == [1, 0])
        #expect(statistics.hits == 2 && statistics.misses == 0)
    }

    @Test func entryExpiredInMemoryIsAMissThere() async throws {
        // Given an entry in both tiers that expires at t = 10
        let tiers = try MemoryOverSlow()
        try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .after(.seconds(10)))
        tiers.clock.advance(by: .seconds(9.999))
        #expect(try await tiers.cache.value(forKey: "k") == bytes("v"))

        // When the clock reaches the expiry
        tiers.clock.advance(by: .milliseconds(1))

        // Then neither tier answers, and memory counted a miss rather than a hit
        #expect(try await tiers.cache.value(forKey: "k") == nil)
        let statistics = tiers.cache.statistics
        let tierStatistics = tiers.cache.tierStatistics
        #expect(tierStatistics.map(\.hits) == [1, 0])
        #expect(tierStatistics.map(\.misses) == [1, 1])
        #expect(statistics.hits == 1 && statistics.misses == 1)
    }

    @Test func concurrentHitsAreEachCountedOnce() async throws {
        // Given 10 keys in memory
        let tiers = try MemoryOverSlow()
        for index in 0..<10 { try await tiers.cache.setValue(bytes("\(index)"), forKey: "k\(index)", expiry: .never) }

        // When 8 tasks read them 500 times each
        try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var found = 0
                    for read in 0..<500 {
                        let index = (task + read) % 10
                        if try await tiers.cache.value(forKey: "k\(index)") == bytes("\(index)") { found += 1 }
                    }
                    return found
                }
            }
            for try await found in group { #expect(found == 500) }
        }

        // Then every hit was counted in tier 0 and overall, none lost to a race
        let statistics = tiers.cache.statistics
        let tierStatistics = tiers.cache.tierStatistics
        #expect(tierStatistics.map(\.hits) == [4_000, 0])
        #expect(statistics.hits == 4_000 && statistics.misses == 0)
        #expect(tiers.slow.calls.filter { $0.operation == .entry }.isEmpty)
    }

    @Test func writeBackCarriesTheRemainingLifetimeCappedByTheTierAndExpiresOnTheBoundary() async throws {
        // Given a value in the slow tier that expires at t0 + 10 s, read at t0 + 4 s
        let clock = ManualClock()
        let setup = try MemoryOverFaulty(clock: clock)
        let start = clock.now
        try await setup.slow.setValue(1, forKey: "k", expiry: .after(.seconds(10)))
        clock.advance(by: .seconds(4))
        #expect(try await setup.cache.value(forKey: "k") == 1)
        // Then memory's copy expires at the earlier of t0 + 10 and t0 + 4 + 5 (its maximum lifetime)
        #expect(setup.memory.entry(forKey: "k")?.expiresAt == start.addingTimeInterval(9))
        // And it answers up to just before that instant, and not at it
        clock.advance(by: .seconds(4.999))
        #expect(try await setup.cache.value(forKey: "k") == 1)
        #expect(setup.cache.tierStatistics.map(\.hits) == [1, 1])
        clock.advance(by: .milliseconds(1))
        #expect(setup.memory.entry(forKey: "k") == nil)
        #expect(try await setup.cache.entry(forKey: "k")?.expiresAt == start.addingTimeInterval(10))
        #expect(setup.cache.tierStatistics.map(\.hits) == [1, 2])
        #expect(setup.cache.tierStatistics.map(\.writeBacks) == [2, 0])
    }

    @Test func singleTierCountsHitsMissesAndTheHitRatio() async throws {
        // Given a MultiCache over one concrete MemoryCache
        let memory = try MemoryCache<String, Int>(clock: ManualClock())
        let cache = try MultiCache<String, Int>(tiers: [.init(memory)])
        #expect(cache.tiers[0].handle.entryAtOnce != nil)
        // When it misses once, stores, then hits three times
        #expect(try await cache.value(forKey: "k") == nil)
        try await cache.setValue(1, forKey: "k", expiry: .never)
        for _ in 0..<3 { #expect(try await cache.value(forKey: "k") == 1) }
        // Then the counts and the ratio are exact
        let statistics = cache.statistics
        let tierStatistics = cache.tierStatistics
        #expect(tierStatistics[0].hits == 3 && tierStatistics[0].misses == 1)
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
        #expect(outer.tiers[0].handle.entryAtOnce == nil && inner.tiers[0].handle.entryAtOnce != nil)
        try await slow.setValue(7, forKey: "k", expiry: .after(.seconds(10)))

        // When the outer cache reads twice
        #expect(try await outer.value(forKey: "k") == 7)
        #expect(try await outer.value(forKey: "k") == 7)

        // Then the first read was written back into the inner cache's memory, which answered the second
        #expect(memory.entry(forKey: "k")?.value == 7)
        #expect(outer.tierStatistics.map(\.hits) == [1, 1])
        #expect(inner.tierStatistics[0].hits == 1 && inner.tierStatistics[0].misses == 1)
        #expect(slow.callCount(.entry) == 1)
    }

    // MARK: - How users build tiers

    @Test func everyWayOfBuildingAMemoryTierPicksTheFastPathWhereItsTypeIsKnown() throws {
        let memory = try MemoryCache<String, Int>()
        let slow = FaultInjectingCache<String, Int>()
        // A concrete cache, by type or in an array literal
        #expect(MultiCache<String, Int>.Tier(memory).handle.entryAtOnce != nil)
        // (named after its type either way)
        #expect(MultiCache<String, Int>.Tier(memory).name == "MemoryCache<String, Int>")
        let erased: any Cache<String, Int> = memory
        #expect(MultiCache<String, Int>.Tier(erased).name == "MemoryCache<String, Int>")
        #expect(MultiCache<String, Int>.Tier(erased).handle.entryAtOnce == nil)
        let tiers: [MultiCache<String, Int>.Tier] = [.init(memory, maximumLifetime: .seconds(1)), .init(slow)]
        #expect(tiers[0].handle.entryAtOnce != nil && tiers[1].handle.entryAtOnce == nil)
        #expect(try MultiCache<String, Int>(tiers: tiers).tiers[0].handle.entryAtOnce != nil)
        // A cache typed as `any SynchronousCache` is opened and still read at once
        let synchronous: any SynchronousCache<String, Int> = memory
        #expect(MultiCache<String, Int>.Tier(synchronous).handle.entryAtOnce != nil)
        // The convenience initializer over `[any Cache]` (the documented shortest form) finds the
        // memory tier's synchronous read too
        #expect(try MultiCache<String, Int>([memory, slow]).tiers[0].handle.entryAtOnce != nil)
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
        #expect(cache.tierStatistics[0].writeBacks == 0)
    }

    @Test(arguments: Removal.allCases)
    func removalDuringALoadBehindAConcreteMemoryTierKeepsTheLoadedValueOut(_ removal: Removal) async throws {
        // Given a load-once caller whose loader is held open, over a concrete memory tier
        let clock = ManualClock()
        let memory = try MemoryCache<String, Int>(clock: clock)
        let slow = FaultInjectingCache<String, Int>(clock: clock)
        let cache = try MultiCache<String, Int>(tiers: [.init(memory), .init(slow)])
        let loader = HeldLoader()
        let caller = Task {
            try await cache.value(forKey: "k", expiry: .never) {
                try await loader.hold()
                return 1
            }
        }
        try await loader.waitUntilHeld()

        // When the key is removed while the loader runs
        try await removal.perform(on: cache)
        loader.release()

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
        for key in 0..<10 { try memory.setValue(key, forKey: "\(key)") }
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
        let tierStatistics = cache.tierStatistics
        #expect(reads == 3_200 && found == 2_400)
        #expect(statistics.hits == found && statistics.hits + statistics.misses == reads)
        #expect(tierStatistics[0].hits + tierStatistics[0].misses == reads)
        #expect(tierStatistics[1].hits + tierStatistics[1].misses == tierStatistics[0].misses)
        #expect(tierStatistics[0].hits + tierStatistics[1].hits == statistics.hits)
        #expect(tierStatistics[1].misses == statistics.misses)
        // (concurrent readers of one key write back once: a write-back is skipped while another store
        // of the key is running)
        #expect(tierStatistics[0].writeBacks >= 20 && tierStatistics[0].writeBacks <= tierStatistics[1].hits)
        #expect(tierStatistics.map(\.errors) == [0, 0])
        // And once the reads are over, memory holds every key the slow tier answered
        let missing = (10..<30).filter { key in memory.entry(forKey: String(key))?.value != key }
        #expect(missing == [])
    }
}

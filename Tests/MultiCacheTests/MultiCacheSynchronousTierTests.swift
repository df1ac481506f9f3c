import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import Testing

@testable import MultiCache

/// A first tier that reads without suspending (a concrete MemoryCache) is read through its synchronous
/// API; these tests pin that path's answers, statistics and fallbacks to the `async` path's.
@Suite struct MultiCacheSynchronousTierTests {
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

    @Test func onlyACacheThatReadsWithoutSuspendingIsReadAtOnce() throws {
        // Given the same MemoryCache as a concrete tier and behind `any Cache`
        let memory = try MemoryCache<String, Data>()
        let concrete = MultiCache<String, Data>.Tier(memory)
        let erased: any Cache<String, Data> = memory
        let existential = MultiCache<String, Data>.Tier(erased)
        // Then only the concrete one has the synchronous read
        #expect(concrete.readAtOnce != nil)
        #expect(existential.readAtOnce == nil)
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
        #expect(statistics.tiers.map(\.hits) == [1, 1])
        #expect(statistics.tiers.map(\.misses) == [1, 0])
        #expect(statistics.tiers.map(\.writeBacks) == [1, 0])
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
        #expect(statistics.tiers.map(\.hits) == [1, 0])
        #expect(statistics.tiers.map(\.misses) == [1, 1])
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
        #expect(statistics.tiers.map(\.hits) == [4_000, 0])
        #expect(statistics.hits == 4_000 && statistics.misses == 0)
        #expect(tiers.slow.calls.filter { $0.operation == .entry }.isEmpty)
    }
}

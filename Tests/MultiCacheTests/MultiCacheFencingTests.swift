import CacheCore
import CacheTesting
import Foundation
import MultiCache
import Testing

/// Writes and removals that land while a load-once caller is still reading the tiers, or while a read is
/// writing back: none may be undone by the load's store or the write-back.
@Suite(.timeLimit(.minutes(10)))
struct MultiCacheFencingTests {
    enum Removal: String, CaseIterable, CustomStringConvertible {
        case removeEntry, removeAll
        var description: String { rawValue }

        func perform<Value>(on cache: MultiCache<String, Value>) async throws {
            switch self {
            case .removeEntry: try await cache.removeEntry(forKey: "k")
            case .removeAll: try await cache.removeAll()
            }
        }
    }

    /// One slow-reading tier under a MultiCache of `Int`s.
    private func makeCache() throws -> (SlowReadingTier<Int>, MultiCache<String, Int>) {
        let tier = SlowReadingTier<Int>(clock: ManualClock())
        return (tier, try MultiCache<String, Int>([tier]))
    }

    @Test func writeDuringTheCallersTierReadIsKeptAndReturnedInsteadOfLoading() async throws {
        // Given a load-once caller whose tier read has missed but not yet answered
        let (tier, cache) = try makeCache()
        let runs = Counter()
        tier.latch.hold(.entry)
        let caller = Task {
            try await cache.value(forKey: "k", expiry: .never) {
                runs.increment()
                return -1
            }
        }
        await tier.latch.waitUntilHeld(.entry)

        // When 42 is written meanwhile, then the read answers its (stale) miss
        try await cache.setValue(42, forKey: "k", expiry: .never)
        tier.latch.release(.entry)

        // Then the caller reads again and gets 42 without loading, and the tier keeps 42
        #expect(try await caller.value == 42)
        #expect(runs.value == 0)
        #expect(try await tier.storage.value(forKey: "k") == 42)
        #expect(try await cache.value(forKey: "k") == 42)
        #expect(cache.statistics.loads == 0)
    }

    @Test(arguments: Removal.allCases)
    func removalDuringTheCallersTierReadKeepsTheLoadedValueOutOfTheTier(_ removal: Removal) async throws {
        // Given a load-once caller whose tier read has missed but not yet answered
        let (tier, cache) = try makeCache()
        tier.latch.hold(.entry)
        let caller = Task { try await cache.value(forKey: "k", expiry: .never) { -1 } }
        await tier.latch.waitUntilHeld(.entry)

        // When the key (or everything) is removed meanwhile
        try await removal.perform(on: cache)
        tier.latch.release(.entry)

        // Then the caller gets its loaded value, but the tier does not hold it
        #expect(try await caller.value == -1)
        #expect(cache.statistics.loads == 1)
        #expect(try await tier.storage.value(forKey: "k") == nil)
        // And a call that starts after the removal loads and stores as usual
        #expect(try await cache.value(forKey: "k", expiry: .never) { 7 } == 7)
        #expect(try await tier.storage.value(forKey: "k") == 7)
    }

    @Test func writeStillRunningWhenTheCallerMissesIsNotOverwritten() async throws {
        // Given a write of 42 that is parked inside the tier
        let (tier, cache) = try makeCache()
        tier.storage.hold(.setEntry)
        let write = Task { try await cache.setValue(42, forKey: "k", expiry: .never) }
        await tier.storage.waitUntilHeld(.setEntry)

        // When a load-once caller misses meanwhile (the 42 has not landed)
        let loaded = try await cache.value(forKey: "k", expiry: .never) { -1 }

        // Then it gets its loaded value without storing it (it did not wait behind the parked write),
        // and once the write lands the tier holds 42
        #expect(loaded == -1)
        #expect(tier.storage.callCount(.setEntry) == 1)
        tier.storage.release(.setEntry)
        try await write.value
        #expect(try await tier.storage.value(forKey: "k") == 42)
        #expect(try await cache.value(forKey: "k") == 42)
    }

    @Test func writeDuringAHeldSlowTierReadOfTwoTiersIsKept() async throws {
        // Given memory over disk, and a caller that missed in memory and is reading the disk
        let tiers = try TwoTiers()
        let cache = tiers.cache
        tiers.slow.hold(.entry)
        let caller = Task { try await cache.value(forKey: "k", expiry: .never) { bytes("loaded") } }
        await tiers.slow.waitUntilHeld(.entry)

        // When a write lands in both tiers, and the disk read then fails (so the caller saw a miss)
        try await cache.setValue(bytes("written"), forKey: "k", expiry: .never)
        tiers.slow.failNext(.entry)
        tiers.slow.release(.entry)

        // Then the caller gets the written value, and neither tier lost it
        #expect(try await caller.value == bytes("written"))
        #expect(try await tiers.fast.value(forKey: "k") == bytes("written"))
        #expect(try await tiers.slow.value(forKey: "k") == bytes("written"))
        #expect(cache.statistics.loads == 0)
    }

    @Test func readDuringARemovalDoesNotWriteBackIntoAnEmptiedTier() async throws {
        // Given an entry only the disk holds, and a removal parked at the disk
        let tiers = try TwoTiers()
        let cache = tiers.cache
        try await tiers.slow.setValue(bytes("old"), forKey: "k", expiry: .never)
        tiers.slow.hold(.removeEntry)
        let removal = Task { try await cache.removeEntry(forKey: "k") }
        await tiers.slow.waitUntilHeld(.removeEntry)

        // When a read runs meanwhile: it misses in memory and finds the old entry on disk
        let read = try await cache.value(forKey: "k")
        tiers.slow.release(.removeEntry)
        try await removal.value

        // Then it may return the old value, but it copied nothing into memory: the key is gone everywhere
        #expect(read == bytes("old"))
        #expect(try await tiers.fast.value(forKey: "k") == nil)
        #expect(try await tiers.slow.value(forKey: "k") == nil)
        #expect(try await cache.value(forKey: "k") == nil)
    }
}

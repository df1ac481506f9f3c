import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import MultiCache
import Testing

/// A tier that implements `Cache`'s basics only (no `TagRemovingCache`), as a third-party conformer may: it
/// keeps the untagged entries a `MultiCache` gives it and no tagged one, so no tagged value outlives its tag.
@Suite struct MultiCacheBasicTierTests {
    /// The basics, over a dictionary; records every tagged entry it is handed.
    final class BasicTier: Cache {
        let clock: any CacheClock
        private let entries = Locked<[String: CacheEntry<Int>]>([:])
        private let taggedWrites = Locked(0)

        init(clock: any CacheClock) { self.clock = clock }

        var taggedEntriesReceived: Int { taggedWrites.withLock { $0 } }

        func entry(forKey key: String) async throws -> CacheEntry<Int>? {
            entries.withLock { entries in
                guard let entry = entries[key] else { return nil }
                if let expiresAt = entry.expiresAt, expiresAt <= clock.now {
                    entries[key] = nil
                    return nil
                }
                return entry
            }
        }

        func setEntry(_ entry: CacheEntry<Int>, forKey key: String) async throws {
            if !entry.tags.isEmpty { taggedWrites.withLock { $0 += 1 } }
            entries.withLock { $0[key] = entry }
        }

        func value(forKey key: String) async throws -> Int? { try await valueThroughEntry(forKey: key) }

        func setValue(_ value: Int, forKey key: String, expiry: Expiry?) async throws {
            try await setValueThroughEntry(value, forKey: key, expiry: expiry)
        }

        func removeEntry(forKey key: String) async throws { _ = entries.withLock { $0.removeValue(forKey: key) } }

        func removeAll() async throws { entries.withLock { $0.removeAll() } }
    }

    @Test func aBasicTierGetsNoTaggedEntryAndATagRemovalStillMissesEverywhere() async throws {
        // Given a MultiCache over a memory tier and a tier with the basics only, holding an older value of "k"
        let clock = ManualClock()
        let memory = try MemoryCache<String, Int>(clock: clock)
        let basic = BasicTier(clock: clock)
        try await basic.setEntry(CacheEntry(value: 0), forKey: "k")
        let cache = try MultiCache<String, Int>(tiers: [.init(memory), .init(basic)], clock: clock)

        // When a tagged value and an untagged one are written, and the tag is removed
        try await cache.setValue(1, forKey: "k", tags: ["t"])
        try await cache.setValue(2, forKey: "plain")
        #expect(try await basic.value(forKey: "k") == nil)
        #expect(try await basic.value(forKey: "plain") == 2)
        try await cache.removeAll(taggedWith: "t")

        // Then the tagged key is a miss in the MultiCache and in each tier (the basic tier's older value went
        // with the tagged write), the untagged one is not, and the basic tier never held a tagged entry
        #expect(try await cache.value(forKey: "k") == nil)
        #expect(memory.value(forKey: "k") == nil)
        #expect(try await basic.value(forKey: "k") == nil)
        #expect(try await cache.value(forKey: "plain") == 2)
        #expect(basic.taggedEntriesReceived == 0)
    }

    @Test func aLoadWithTagsIsKeptOutOfABasicTier() async throws {
        let clock = ManualClock()
        let memory = try MemoryCache<String, Int>(clock: clock)
        let basic = BasicTier(clock: clock)
        let cache = try MultiCache<String, Int>(tiers: [.init(memory), .init(basic)], clock: clock)

        #expect(try await cache.value(forKey: "k", tags: ["t"]) { 7 } == 7)

        #expect(memory.entry(forKey: "k")?.tags == ["t"])
        #expect(try await basic.value(forKey: "k") == nil)
        #expect(basic.taggedEntriesReceived == 0)
    }

    @Test(arguments: CacheContract.Check.allCases)
    func aBasicTierKeepsTheCacheContract(_ check: CacheContract.Check) async throws {
        try await CacheContract.verify(check) { clock in BasicTierOfData(clock: clock) }
    }

    /// The same basics for `Data` values, for the contract (which a cache without tag removal passes: its
    /// tag checks are skipped).
    final class BasicTierOfData: Cache {
        let clock: any CacheClock
        private let entries = Locked<[String: CacheEntry<Data>]>([:])

        init(clock: any CacheClock) { self.clock = clock }

        func entry(forKey key: String) async throws -> CacheEntry<Data>? {
            entries.withLock { entries in
                let key = key.precomposedStringWithCanonicalMapping
                guard let entry = entries[key] else { return nil }
                // Dropped when found expired, so a clock moved back does not revive it.
                if let expiresAt = entry.expiresAt, expiresAt <= clock.now {
                    entries[key] = nil
                    return nil
                }
                return entry
            }
        }

        func setEntry(_ entry: CacheEntry<Data>, forKey key: String) async throws {
            let key = key.precomposedStringWithCanonicalMapping
            entries.withLock { entries in
                if let expiresAt = entry.expiresAt, expiresAt <= clock.now {
                    entries[key] = nil
                } else {
                    entries[key] = entry
                }
            }
        }

        func value(forKey key: String) async throws -> Data? { try await valueThroughEntry(forKey: key) }

        func setValue(_ value: Data, forKey key: String, expiry: Expiry?) async throws {
            try await setValueThroughEntry(value, forKey: key, expiry: expiry)
        }

        func removeEntry(forKey key: String) async throws {
            _ = entries.withLock { $0.removeValue(forKey: key.precomposedStringWithCanonicalMapping) }
        }

        func removeAll() async throws { entries.withLock { $0.removeAll() } }
    }
}

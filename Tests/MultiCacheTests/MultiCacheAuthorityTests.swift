import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import MultiCache
import Testing

/// The last tier as the authority (`MultiCache.Authority`): its hit wins and replaces a differing local
/// copy, its miss removes the local copies, its failure lets the local tiers answer alone.
@Suite struct MultiCacheAuthorityTests {
    @Test func aHitInTheAuthorityFillsAMissingLocalCopy() async throws {
        // Given a value only in the authoritative tier
        let tiers = try TwoTiers(authority: .init())
        try await tiers.slow.setValue(bytes("v1"), forKey: "k", expiry: .seconds(60))

        // When it is read
        let value = try await tiers.cache.value(forKey: "k")

        // Then the authority's value is returned and copied above it
        #expect(value == bytes("v1"))
        #expect(try await tiers.fast.value(forKey: "k") == bytes("v1"))
        #expect(tiers.cache.tierStatistics.map(\.writeBacks) == [1, 0])
        #expect(tiers.cache.tierStatistics.map(\.hits) == [0, 1])
        #expect(tiers.cache.statistics.hits == 1)
    }

    @Test func aCurrentLocalCopyIsNotWrittenAgain() async throws {
        // Given the same entry above and in the authority (written through the cache)
        let tiers = try TwoTiers(authority: .init())
        try await tiers.cache.setValue(bytes("v1"), forKey: "k", expiry: .seconds(60))
        let writesBefore = tiers.fast.callCount(.setEntry)

        // When it is read three times
        for _ in 0..<3 { #expect(try await tiers.cache.value(forKey: "k") == bytes("v1")) }

        // Then the authority was asked each time, and the local tier was never written
        #expect(tiers.slow.callCount(.entry) == 3)
        #expect(tiers.fast.callCount(.setEntry) == writesBefore)
        #expect(tiers.cache.tierStatistics.map(\.writeBacks) == [0, 0])
    }

    @Test func aLocalCopyThatDiffersIsReplacedByTheAuthoritys() async throws {
        // Given a local copy that another process has since replaced in the authority
        let tiers = try TwoTiers(authority: .init())
        try await tiers.cache.setValue(bytes("old"), forKey: "k", expiry: .seconds(60))
        try await tiers.slow.setValue(bytes("new"), forKey: "k", expiry: .seconds(60))

        // When it is read
        let value = try await tiers.cache.value(forKey: "k")

        // Then the authority's value wins and replaces the local copy
        #expect(value == bytes("new"))
        #expect(try await tiers.fast.value(forKey: "k") == bytes("new"))
    }

    @Test func aLocalCopyWithAnotherExpiryIsReplaced() async throws {
        // Given the same bytes rewritten in the authority with a later expiry
        let tiers = try TwoTiers(authority: .init())
        try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .seconds(60))
        try await tiers.slow.setValue(bytes("v"), forKey: "k", expiry: .seconds(600))

        // When it is read
        _ = try await tiers.cache.value(forKey: "k")

        // Then the local copy now carries the authority's expiry
        let local = try #require(try await tiers.fast.entry(forKey: "k"))
        let expected = tiers.clock.now.addingTimeInterval(600)
        #expect(abs(try #require(local.expiresAt).timeIntervalSince(expected)) < 0.001)
    }

    @Test func aMissInTheAuthorityRemovesTheLocalCopy() async throws {
        // Given a local copy of a key another process removed from the authority
        let tiers = try TwoTiers(authority: .init())
        try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .seconds(60))
        try await tiers.slow.removeEntry(forKey: "k")

        // When it is read
        let value = try await tiers.cache.value(forKey: "k")

        // Then it is a miss and the local copy is gone
        #expect(value == nil)
        #expect(try await tiers.fast.value(forKey: "k") == nil)
        #expect(tiers.cache.statistics.misses == 1)
        #expect(tiers.cache.tierStatistics.map(\.misses) == [0, 1])
    }

    @Test func anEntryTheAuthorityCannotStoreIsServedFromLocalTiers() async throws {
        // Given an authority that holds no value over 4 bytes, and a large value written through the cache
        let tiers = try TwoTiers(authority: .init(storesEntry: { $0.value.count <= 4 }))
        try await tiers.fast.setValue(bytes("too large"), forKey: "big", expiry: .seconds(60))
        try await tiers.fast.setValue(bytes("tiny"), forKey: "small", expiry: .seconds(60))

        // When both are read (the authority misses both)
        let big = try await tiers.cache.value(forKey: "big")
        let small = try await tiers.cache.value(forKey: "small")

        // Then the large one, which could only live locally, is served and kept; the small one is dropped
        #expect(big == bytes("too large"))
        #expect(try await tiers.fast.value(forKey: "big") == bytes("too large"))
        #expect(small == nil)
        #expect(try await tiers.fast.value(forKey: "small") == nil)
    }

    @Test func aKeyTheAuthorityCannotStoreIsReadFromTheLocalTiersAlone() async throws {
        // Given an authority that holds no key longer than 4 characters, and a local copy of one such key and
        // of one it can hold (the authority has neither)
        let tiers = try TwoTiers(authority: .init(storesKey: { $0.count <= 4 }))
        try await tiers.fast.setValue(bytes("v"), forKey: "long-key", expiry: .seconds(60))
        try await tiers.fast.setValue(bytes("v"), forKey: "k", expiry: .seconds(60))

        // When both are read
        let long = try await tiers.cache.value(forKey: "long-key")
        let short = try await tiers.cache.value(forKey: "k")

        // Then the long key is served from the local tier without asking the authority, and kept; the short
        // one is asked for once, and its miss drops the local copy
        #expect(long == bytes("v"))
        #expect(try await tiers.fast.value(forKey: "long-key") == bytes("v"))
        #expect(tiers.slow.callCount(.entry) == 1)
        #expect(short == nil)
        #expect(try await tiers.fast.value(forKey: "k") == nil)
    }

    @Test func aFailingAuthorityLetsTheLocalTiersAnswer() async throws {
        // Given a local copy, and an authority that cannot be reached
        let events = EventLog()
        let tiers = try TwoTiers(observer: events.observer, authority: .init())
        try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .seconds(60))
        tiers.slow.failAlways(.entry)

        // When it is read, and a key held nowhere is read
        let value = try await tiers.cache.value(forKey: "k")
        let absent = try await tiers.cache.value(forKey: "absent")

        // Then the local copy is served and kept, the absent key is a miss, and each failure is reported
        #expect(value == bytes("v"))
        #expect(absent == nil)
        #expect(try await tiers.fast.value(forKey: "k") == bytes("v"))
        #expect(events.all.filter { $0.kind == .tierReadFailed && $0.tierIndex == 1 }.count == 2)
        #expect(tiers.cache.tierStatistics.map(\.errors) == [0, 2])
        #expect(tiers.cache.statistics.hits == 1 && tiers.cache.statistics.misses == 1)
    }

    @Test func everyTierFailingThrowsTierFailure() async throws {
        let tiers = try TwoTiers(authority: .init())
        tiers.fast.failAlways(.entry)
        tiers.slow.failAlways(.entry)
        await #expect {
            _ = try await tiers.cache.entry(forKey: "k")
        } throws: { error in
            (error as? CacheError)?.code == .tierFailure && (error as? CacheError)?.tierFailures.count == 2
        }
    }

    @Test func bulkReadsFollowTheAuthority() async throws {
        // Given a current copy, a stale copy, a removed key and a key only in the authority
        let tiers = try TwoTiers(authority: .init())
        try await tiers.cache.setValue(bytes("same"), forKey: "a", expiry: .seconds(60))
        try await tiers.cache.setValue(bytes("old"), forKey: "b", expiry: .seconds(60))
        try await tiers.slow.setValue(bytes("new"), forKey: "b", expiry: .seconds(60))
        try await tiers.cache.setValue(bytes("gone"), forKey: "c", expiry: .seconds(60))
        try await tiers.slow.removeEntry(forKey: "c")
        try await tiers.slow.setValue(bytes("remote"), forKey: "d", expiry: .seconds(60))

        // When they are read in bulk
        let values = try await tiers.cache.values(forKeys: ["a", "b", "c", "d"])

        // Then each is the authority's answer, and the local tier follows it
        #expect(values == ["a": bytes("same"), "b": bytes("new"), "d": bytes("remote")])
        #expect(try await tiers.fast.value(forKey: "b") == bytes("new"))
        #expect(try await tiers.fast.value(forKey: "c") == nil)
        #expect(try await tiers.fast.value(forKey: "d") == bytes("remote"))
    }

    @Test func loadOnceLoadsWhenTheAuthorityMisses() async throws {
        // Given a stale local copy of a key the authority no longer holds
        let tiers = try TwoTiers(authority: .init())
        try await tiers.fast.setValue(bytes("stale"), forKey: "k", expiry: .seconds(60))

        // When it is read with a loader
        let value = try await tiers.cache.value(forKey: "k", expiry: .seconds(60)) { bytes("loaded") }

        // Then the loader ran, and both tiers hold its value
        #expect(value == bytes("loaded"))
        #expect(try await tiers.slow.value(forKey: "k") == bytes("loaded"))
        #expect(try await tiers.fast.value(forKey: "k") == bytes("loaded"))
    }

    @Test func aMissSeenBeforeAWriteDoesNotRemoveTheWritesLocalCopy() async throws {
        // Given a local copy the authority no longer holds, and a read of it held inside the authority,
        // which will answer a miss
        let tiers = try TwoTiers(authority: .init())
        try await tiers.fast.setValue(bytes("old"), forKey: "k", expiry: .seconds(60))
        tiers.slow.hold(.entry)
        let read = Task { try await tiers.cache.value(forKey: "k") }
        await tiers.slow.waitUntilHeld(.entry)

        // When the key is written meanwhile and only the local tier takes it (the authority refuses)
        tiers.slow.failNext(.setEntry)
        await #expect(throws: CacheError.self) {
            try await tiers.cache.setValue(bytes("written"), forKey: "k", expiry: .seconds(60))
        }
        tiers.slow.release(.entry)
        let value = try await read.value

        // Then the read's miss stands for itself, but it does not remove the newer write's local copy
        #expect(value == nil)
        #expect(try await tiers.fast.value(forKey: "k") == bytes("written"))
    }

    @Test func bulkReadsOverASynchronousFirstTierFollowTheAuthority() async throws {
        // Given a memory tier read without suspending, holding a copy the authority has since replaced
        let memory = try MemoryCache<String, Data>()
        let remote = try MemoryCache<String, Data>()
        let cache = try MultiCache<String, Data>(
            tiers: [.init(memory, name: "memory"), .init(remote, name: "remote")], authority: .init())
        try memory.setValue(bytes("old"), forKey: "k")
        try remote.setValue(bytes("new"), forKey: "k")

        // When it is read in bulk, the authority's value is the answer
        #expect(try await cache.values(forKeys: ["k"]) == ["k": bytes("new")])
        #expect(memory.value(forKey: "k") == bytes("new"))
    }

    @Test func anAuthorityNeedsATierAboveIt() throws {
        let memory = try MemoryCache<String, Data>()
        #expect(throws: CacheError.self) {
            _ = try MultiCache<String, Data>(tiers: [.init(memory, name: "only")], authority: .init())
        }
    }

    @Test func valuesThatAreNotEquatableUseTheGivenComparison() async throws {
        // Given an authority that calls entries the same by expiry alone
        let clock = ManualClock()
        let local = FaultInjectingCache<String, Data>(wrapping: try MemoryCache<String, Data>(clock: clock))
        let remote = try MemoryCache<String, Data>(clock: clock)
        let cache = try MultiCache<String, Data>(
            tiers: [.init(local, name: "local"), .init(remote, name: "remote")],
            authority: .init(isSameEntry: { $0.expiresAt == $1.expiresAt }))
        let entry = CacheEntry(value: bytes("v"), expiresAt: clock.now.addingTimeInterval(60))
        try await local.setEntry(entry, forKey: "k")
        try remote.setEntry(CacheEntry(value: bytes("w"), expiresAt: entry.expiresAt), forKey: "k")

        // When it is read, the local copy counts as current and is not rewritten
        #expect(try await cache.value(forKey: "k") == bytes("w"))
        #expect(local.callCount(.setEntry) == 1)
    }
}

import CacheCore
import CacheTesting
import Foundation
import Testing

@testable import MemoryCache

extension MemoryCacheTests {
    @Test(arguments: [1, 4])
    func removingATagMakesEveryEntryCarryingItAMissAndNoOther(shardCount: Int) throws {
        let clock = ManualClock()
        let cache = try makeCache(shardCount: shardCount, clock: clock)
        try cache.setValue(1, forKey: "balance", tags: ["account:7"])
        try cache.setValue(2, forKey: "statement", expiry: .seconds(60), tags: ["account:7", "statements"])
        try cache.setValue(3, forKey: "other", tags: ["account:8"])
        try cache.setValue(4, forKey: "plain")
        // Hits first, so that the removal must get past each entry's last successful tag check
        #expect(cache.value(forKey: "balance") == 1)
        #expect(cache.value(forKey: "statement") == 2)

        cache.removeAll(taggedWith: "account:7")

        #expect(cache.value(forKey: "balance") == nil)
        #expect(cache.entry(forKey: "statement") == nil)
        #expect(cache.value(forKey: "other") == 3)
        #expect(cache.value(forKey: "plain") == 4)
        // Found stale by the reads above, the two entries are gone, not only hidden
        #expect(cache.count == 2)
        #expect(cache.checkInvariants())
    }

    @Test func removeValueDoesNotReturnAnEntryWhoseTagWasRemoved() throws {
        // Given a tagged entry whose tag is removed before any read drops it
        let cache = try makeCache()
        try cache.setValue(1, forKey: "balance", tags: ["account:7"])
        try cache.setValue(2, forKey: "other", tags: ["account:8"])
        cache.removeAll(taggedWith: "account:7")
        // When the key is removed, the ended entry is not handed back as the key's value (a read would miss)
        #expect(cache.removeValue(forKey: "balance") == nil)
        // Then it is gone all the same, and a live tagged entry's value is still returned
        #expect(cache.count == 1)
        #expect(cache.removeValue(forKey: "other") == 2)
        #expect(cache.checkInvariants())
    }

    @Test func anEntryReturnsItsTagsAndATagUsedAgainAfterRemovalStartsAfresh() throws {
        let cache = try makeCache()
        try cache.setValue(1, forKey: "a", tags: ["t", "u"])
        #expect(cache.entry(forKey: "a")?.tags == ["t", "u"])

        cache.removeAll(taggedWith: "t")
        try cache.setValue(2, forKey: "a", tags: ["t"])

        #expect(cache.entry(forKey: "a") == CacheEntry(value: 2, cost: 1, tags: ["t"]))
    }

    @Test func anEntryStampedBeforeARemovalIsNotStoredAndDropsTheEarlierOne() throws {
        // Given a snapshot of "t" taken before a load, and an earlier entry under the key
        let cache = try makeCache()
        let snapshot = cache.tagVersions(for: ["t"])
        try cache.setValue(0, forKey: "k")
        // When "t" is removed while the load runs, then the loaded entry is stored stamped with the snapshot
        cache.removeAll(taggedWith: "t")
        try cache.setEntry(CacheEntry(value: 1, tags: ["t"]), forKey: "k", taggedAt: snapshot)
        // Then it is dead on arrival and the earlier entry is gone too
        #expect(cache.value(forKey: "k") == nil)
        #expect(cache.count == 0)
        #expect(snapshot.versions == ["t": 0])
        #expect(cache.tagVersions(for: ["t"]).versions == ["t": 1])
    }

    @Test func removeExpiredAlsoDropsEntriesWhoseTagWasRemoved() throws {
        let cache = try makeCache()
        for index in 0..<10 {
            try cache.setValue(index, forKey: "k\(index)", tags: index.isMultiple(of: 2) ? ["even"] : [])
        }
        cache.removeAll(taggedWith: "even")
        #expect(cache.count == 10)
        _ = cache.removeExpired()
        #expect(cache.count == 5)
        #expect(cache.checkInvariants())
    }

    @Test func aWindowTinyLFUCacheHonoursTagsToo() throws {
        let cache = try MemoryCache<String, Int>(policy: .windowTinyLFU, clock: ManualClock())
        for index in 0..<100 { try cache.setValue(index, forKey: "k\(index)", tags: ["group-\(index % 3)"]) }
        for index in 0..<100 { #expect(cache.value(forKey: "k\(index)") == index) }
        cache.removeAll(taggedWith: "group-1")
        for index in 0..<100 { #expect((cache.value(forKey: "k\(index)") == nil) == (index % 3 == 1)) }
        #expect(cache.count == 67)
    }

    @Test func aTaggedEntryStillExpiresOnTime() throws {
        let clock = ManualClock()
        let cache = try makeCache(clock: clock)
        try cache.setValue(1, forKey: "a", expiry: .seconds(10), tags: ["t"])
        clock.advance(by: 9.999)
        #expect(cache.value(forKey: "a") == 1)
        clock.advance(by: 0.001)
        #expect(cache.value(forKey: "a") == nil)
    }

    @Test func tagRemovalsRacingTaggedWritesNeverLeaveAStaleEntryLive() async throws {
        // Each round: a writer stores under a fresh tag version while a remover advances it; whatever the
        // interleaving, once the removal has returned a read made after it must miss.
        let cache = try makeCache(shardCount: 4)
        for round in 0..<500 {
            let key = "k\(round % 8)"
            async let write: Void = { try? cache.setValue(round, forKey: key, tags: ["t"]) }()
            async let remove: Void = { cache.removeAll(taggedWith: "t") }()
            _ = await (write, remove)
            cache.removeAll(taggedWith: "t")
            #expect(cache.value(forKey: key) == nil)
        }
    }
}

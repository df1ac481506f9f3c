import CacheCore
import CacheTesting
import Foundation
import Testing

@testable import MemoryCache

/// Each check the memory tier makes twice (once where it stores, once where it reads), tested on its own:
/// an entry is live while `now < expiresAt` and gone from `expiresAt` on, at every place that judges it, and
/// a refused entry (expired, oversize, or stamped with a removed tag's old version) is never held, so it
/// counts for nothing and evicts nothing, even though a read would not return it anyway.
@Suite struct MemoryCacheBoundaryTests {
    let clock = ManualClock()
    var deadline: Date { clock.now.addingTimeInterval(10) }

    func makeCache(countLimit: Int? = nil, costLimit: Int? = nil) throws -> MemoryCache<String, Int> {
        try MemoryCache(countLimit: countLimit, costLimit: costLimit, clock: clock)
    }

    @Test func removingAnEntryReturnsItsValueOnlyBeforeItsExpiry() throws {
        // Given two entries that expire at the same instant
        let cache = try makeCache()
        let deadline = self.deadline
        try cache.setValue(1, forKey: "a", expiry: .at(deadline))
        try cache.setValue(2, forKey: "b", expiry: .at(deadline))

        // When one is removed just before the instant and the other at it
        clock.set(to: deadline.addingTimeInterval(-0.25))
        let before = cache.removeValue(forKey: "a")
        clock.set(to: deadline)
        let at = cache.removeValue(forKey: "b")

        // Then only the first removal hands back a value: at its expiry the entry is no value any more
        #expect(before == 1)
        #expect(at == nil)
        #expect(cache.count == 0)
    }

    @Test(arguments: [0.0, -1.0])
    func anEntryExpiringNowIsNotStoredAndEvictsNothing(offset: Double) throws {
        // Given a full cache of one entry
        let cache = try makeCache(countLimit: 1)
        try cache.setValue(1, forKey: "a")

        // When an entry whose expiry is now (or past) is stored
        try cache.setValue(2, forKey: "b", expiry: .at(clock.now.addingTimeInterval(offset)))

        // Then it was refused at the door: the older entry is still there and nothing was inserted or evicted
        #expect(cache["a"] == 1)
        #expect(cache.count == 1)
        #expect(cache.statistics.insertions == 1)
        #expect(cache.statistics.evictions == 0)
    }

    @Test func aPurgeAtTheExpiryRemovesTheEntryAndOnlyIt() throws {
        // Given one entry expiring at the deadline and one a second later
        let cache = try makeCache()
        try cache.setValue(1, forKey: "a", expiry: .at(deadline))
        try cache.setValue(2, forKey: "b", expiry: .at(deadline.addingTimeInterval(1)))

        // When the expired entries are purged exactly at the deadline
        clock.set(to: deadline)
        let removed = cache.removeExpired()

        // Then the first is gone, counted as one expiration, and the second stays
        #expect(removed == 1)
        #expect(cache.count == 1)
        #expect(cache.statistics.expirations == 1)
        #expect(cache["b"] == 2)
    }

    @Test func aStaleEntryIsKeptUntilItsStaleEndAndDroppedAtIt() throws {
        // Given an entry that expires at the deadline and may be served stale for 10 s more
        let cache = try makeCache()
        let deadline = self.deadline
        let staleEnd = deadline.addingTimeInterval(10)
        try cache.setEntry(CacheEntry(value: 1, expiresAt: deadline, staleUntil: staleEnd), forKey: "a")

        // When it is read inside the stale window
        clock.set(to: staleEnd.addingTimeInterval(-0.5))
        // Then a plain read misses but keeps it, and a stale read still finds it
        #expect(cache["a"] == nil)
        #expect(cache.count == 1)
        #expect(cache.removeExpired() == 0)
        #expect(cache.entryIncludingStale(forKey: "a")?.value == 1)

        // When the stale window has ended
        clock.set(to: staleEnd)
        // Then a stale read misses, and a plain read drops the entry and counts its expiration
        #expect(cache.entryIncludingStale(forKey: "a") == nil)
        #expect(cache.count == 1)
        #expect(cache["a"] == nil)
        #expect(cache.count == 0)
        #expect(cache.statistics.expirations == 1)
        #expect(cache.statistics.misses == 3)
    }

    @Test func aPurgeAtTheStaleEndRemovesTheStaleEntry() throws {
        // Given an entry kept stale for 10 s after its expiry
        let cache = try makeCache()
        let staleEnd = deadline.addingTimeInterval(10)
        try cache.setEntry(CacheEntry(value: 1, expiresAt: deadline, staleUntil: staleEnd), forKey: "a")

        // Then a purge inside the window keeps it and one at the window's end removes it
        clock.set(to: staleEnd.addingTimeInterval(-0.5))
        #expect(cache.removeExpired() == 0)
        clock.set(to: staleEnd)
        #expect(cache.removeExpired() == 1)
        #expect(cache.count == 0)
    }

    @Test func anOversizeEntryIsRefusedAndEvictsNothing() throws {
        // Given a cache of cost 10 holding two entries of cost 5
        let cache = try makeCache(costLimit: 10)
        try cache.setValue(1, forKey: "a", cost: 5)
        try cache.setValue(2, forKey: "b", cost: 5)

        // When an entry of cost 11 is stored
        #expect(throws: CacheError.self) { try cache.setValue(3, forKey: "c", cost: 11) }

        // Then it is not held and the others are untouched
        #expect(cache["c"] == nil)
        #expect(cache["a"] == 1 && cache["b"] == 2)
        #expect(cache.totalCost == 10)
        #expect(cache.statistics.evictions == 0)
    }

    @Test func replacingAndRemovingAnEntryGiveItsCostBack() throws {
        // Given an entry of cost 5 replaced by one of cost 3
        let cache = try makeCache(costLimit: 10)
        try cache.setValue(1, forKey: "a", cost: 5)
        try cache.setValue(2, forKey: "a", cost: 3)
        #expect(cache.totalCost == 3)

        // When it is removed, then an entry of the whole limit fits without evicting anything held before
        cache.removeValue(forKey: "a")
        #expect(cache.totalCost == 0)
        try cache.setValue(4, forKey: "b", cost: 10)
        #expect(cache.totalCost == 10)
        #expect(cache.statistics.evictions == 0)
    }

    @Test func anEntryStampedBeforeItsTagWasRemovedIsNotStoredAndEvictsNothing() throws {
        // Given a full cache of one entry, and the versions of tag "t" taken before "t" is removed
        let cache = try makeCache(countLimit: 1)
        try cache.setValue(1, forKey: "a")
        let versions = cache.tagVersions(for: ["t"])
        cache.removeAll(taggedWith: "t")

        // When an entry tagged "t" is stored with the old versions (a load that began before the removal)
        try cache.setEntry(CacheEntry(value: 2, tags: ["t"]), forKey: "b", taggedAt: versions)

        // Then it is refused when stored, not only when read: the entry held before is still there
        #expect(cache["a"] == 1)
        #expect(cache.count == 1)
        #expect(cache.statistics.evictions == 0)
        #expect(cache["b"] == nil)
    }

    @Test func anEntryWithoutExpiryEndsWithItsTag() throws {
        // Given an entry tagged "t" that never expires, read once so its tag check is cached
        let cache = try makeCache()
        try cache.setValue(1, forKey: "a", tags: ["t"])
        #expect(cache["a"] == 1)

        // When "t" is removed
        cache.removeAll(taggedWith: "t")

        // Then the entry is a miss on the read path that needs no clock too
        #expect(cache["a"] == nil)
        #expect(cache.entry(forKey: "a") == nil)
        #expect(cache.count == 0)
    }
}

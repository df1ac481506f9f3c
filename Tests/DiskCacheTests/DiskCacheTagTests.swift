import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// Tags on disk (Docs/Tags.md, "In the disk tier"): records stamped with their tags' versions, per-tag
/// counter files shared by every instance and process on the folder, and what a damaged counter does.
@Suite struct DiskCacheTagTests {
    let folder = TemporaryFolder()

    private func entry(_ text: String, tags: Set<String>) -> CacheEntry<Data> {
        CacheEntry(value: Data(text.utf8), tags: tags)
    }

    @Test(arguments: TestStore.engines)
    func aTagRemovalByAnotherInstanceOnTheSameFolderMissesTheEntryHere(_ engine: Engine) throws {
        let here = try makeCache(folder, engine: engine)
        let there = try makeCache(folder, engine: engine)
        try here.setEntry(entry("a", tags: ["t"]), forKey: "a")
        try here.setEntry(entry("b", tags: ["t", "u"]), forKey: "b")
        try here.setEntry(entry("c", tags: ["u"]), forKey: "c")
        try here.setValue(Data("d".utf8), forKey: "d")
        #expect(try here.entry(forKey: "a")?.tags == ["t"])
        #expect(try here.entry(forKey: "b")?.tags == ["t", "u"])

        try there.removeAll(taggedWith: "t")

        #expect(try here.value(forKey: "a") == nil)
        #expect(try here.value(forKey: "b") == nil)
        #expect(try here.value(forKey: "c") == Data("c".utf8))
        #expect(try here.value(forKey: "d") == Data("d".utf8))
        // The stale files were dropped by the reads; a tag used again starts afresh.
        #expect(try EngineStorage(folder, engine).count() == 2)
        try here.setEntry(entry("a2", tags: ["t"]), forKey: "a")
        #expect(try there.value(forKey: "a") == Data("a2".utf8))
        // One counter per tag ever used: the tagged writes created "t" and "u"'s (FenceCounter's rule).
        #expect(try EngineStorage(folder, engine).tagCounters().count == 2)
    }

    @Test(arguments: TestStore.engines, [10.0, -10.0])
    func aLoadFencedByARemovalInAnotherInstanceWithASkewedClockStoresNothingLive(
        _ engine: Engine, skew: TimeInterval
    ) throws {
        let loaderClock = ManualClock()
        let removerClock = ManualClock(start: loaderClock.now.addingTimeInterval(skew))
        let loader = try makeCache(folder, clock: loaderClock, engine: engine)
        let remover = try makeCache(folder, clock: removerClock, engine: engine)
        try loader.setEntry(entry("old", tags: ["t"]), forKey: "k")

        // The load snapshots the versions, the other instance removes the tag while the loader "runs".
        let snapshot = try loader.tagVersions(for: ["t"])
        try remover.removeAll(taggedWith: "t")
        loaderClock.advance(by: 1)
        try loader.setEntry(entry("loaded", tags: ["t"]), forKey: "k", taggedAt: snapshot)

        #expect(try loader.value(forKey: "k") == nil)
        #expect(try remover.value(forKey: "k") == nil)
        #expect(try EngineStorage(folder, engine).count() == 0)

        // Control: a load that starts after the removal is stored and served.
        let fresh = try loader.tagVersions(for: ["t"])
        #expect(fresh.versions["t"] == snapshot.versions["t"].map { $0 + 1 })
        try loader.setEntry(entry("loaded", tags: ["t"]), forKey: "k", taggedAt: fresh)
        #expect(try remover.value(forKey: "k") == Data("loaded".utf8))
    }

    @Test(arguments: TestStore.engines)
    func aTamperedCounterFileMakesItsEntriesMissesAndIsReported(_ engine: Engine) throws {
        let events = EventRecorder()
        let cache = try makeCache(folder, observer: events.observer, engine: engine)
        try cache.removeAll(taggedWith: "t")
        try cache.removeAll(taggedWith: "u")
        try cache.setEntry(entry("a", tags: ["t"]), forKey: "a")
        try cache.setEntry(entry("b", tags: ["u"]), forKey: "b")
        #expect(try cache.value(forKey: "a") == Data("a".utf8))
        let storage = EngineStorage(folder, engine)
        let counters = try storage.tagCounters()
        #expect(counters.count == 2)
        let tName = try cache.tagCounters.fileName(of: "t")
        let tCounter = try #require(counters[tName])
        let uCounter = try #require(counters.first { $0.key != tName }?.value)

        // A bit flipped in the version: the MAC fails.
        var bytes = tCounter
        bytes[7] ^= 1
        try storage.replaceTagCounter(named: tName, with: bytes)
        #expect(try cache.value(forKey: "a") == nil)
        #expect(events.count(of: .corruptEntryKept) >= 1)
        #expect(try storage.count() == 2)  // kept: the counter, not the entry, is damaged
        #expect(throws: CacheError.self) { try cache.tagVersions(for: ["t"]) }

        // Another tag's valid counter copied over it: bound to its name, so it fails too (its version alone
        // would not tell: counters start at random bases, so "u"'s differs from the one "a" was stamped with)
        try storage.replaceTagCounter(named: tName, with: uCounter)
        #expect(throws: CacheError.self) { try cache.tagVersions(for: ["t"]) }
        #expect(try cache.value(forKey: "a") == nil)
        #expect(try cache.value(forKey: "b") == Data("b".utf8))

        // Removing the tag replaces the damaged counter; its new entries are live again.
        try cache.removeAll(taggedWith: "t")
        #expect(try cache.value(forKey: "a") == nil)
        try cache.setEntry(entry("a2", tags: ["t"]), forKey: "a")
        #expect(try cache.value(forKey: "a") == Data("a2".utf8))
    }

    @Test(arguments: TestStore.engines)
    func untaggedRecordsKeepTheFormerLayoutAndTaggedOnesCarryTheFlag(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        let storage = EngineStorage(folder, engine)
        try cache.setValue(Data("plain".utf8), forKey: "plain")
        let plain = try #require(try storage.records()[cache.entryName(for: "plain")])
        #expect(plain[5] & EntryRecord.flagHasTags == 0)
        #expect(plain.count == EntryRecord.overhead + 2 * "plain".utf8.count)  // key and value, nothing more
        try cache.setEntry(entry("tagged", tags: ["t"]), forKey: "tagged")
        let tagged = try #require(try storage.records()[cache.entryName(for: "tagged")])
        #expect(tagged[5] & EntryRecord.flagHasTags != 0)
        // Tag names are inside the ciphertext.
        #expect(tagged.range(of: Data("tagged".utf8)) == nil)
        #expect(try cache.value(forKey: "plain") == Data("plain".utf8))
        #expect(try cache.entry(forKey: "plain")?.tags == [])
    }

    @Test(arguments: TestStore.engines)
    func removeAllLeavesCountersCountingAndTaggedEntriesWorkAfterIt(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        try cache.setEntry(entry("a", tags: ["t"]), forKey: "a")
        try cache.removeAll(taggedWith: "t")
        let before = try cache.tagVersions(for: ["t"])
        try cache.setEntry(entry("a", tags: ["t"]), forKey: "a")
        try cache.removeAll()
        #expect(try cache.value(forKey: "a") == nil)
        #expect(try cache.tagVersions(for: ["t"]) == before)
        try cache.setEntry(entry("b", tags: ["t"]), forKey: "b")
        #expect(try cache.value(forKey: "b") == Data("b".utf8))
        try cache.removeAll(taggedWith: "t")
        #expect(try cache.value(forKey: "b") == nil)
    }

    @Test(arguments: TestStore.engines)
    func removeExpiredVerifyAndListingDropEntriesWhoseTagWasRemovedAndNothingElse(_ engine: Engine) throws {
        // Given tagged and untagged entries, one that expires, and a sweep before any tag was removed
        let clock = ManualClock()
        let here = try makeCache(folder, clock: clock, engine: engine)
        let there = try makeCache(folder, clock: clock, engine: engine)
        try here.setEntry(entry("a", tags: ["t"]), forKey: "a")
        try here.setEntry(entry("b", tags: ["t", "u"]), forKey: "b")
        try here.setEntry(entry("c", tags: ["u"]), forKey: "c")
        try here.setValue(Data("d".utf8), forKey: "d")
        try here.setEntry(CacheEntry(value: Data("e".utf8), expiresAt: clock.now.addingTimeInterval(5)), forKey: "e")
        #expect(try here.removeExpired() == 0)
        #expect(try EngineStorage(folder, engine).count() == 5)

        // When another instance removes "t", an entry is tagged "t" after that, and "e" expires
        try there.removeAll(taggedWith: "t")
        try there.setEntry(entry("f", tags: ["t"]), forKey: "f")
        clock.advance(by: 10)

        // Then the sweep drops the stale "a" and "b" (never read since) and the expired "e", and keeps the
        // live ones; only "e" counts as an expiration
        let expirationsBefore = here.statistics.expirations
        #expect(try here.removeExpired() == 3)
        #expect(here.statistics.expirations == expirationsBefore + 1)
        #expect(try EngineStorage(folder, engine).count() == 3)
        #expect(here.count == 3)
        #expect(try here.removeExpired() == 0)
        for key in ["c", "d", "f"] { #expect(try here.value(forKey: key) == Data(key.utf8)) }

        // And listing and verifying drop what a later removal made stale
        try there.removeAll(taggedWith: "u")
        #expect(try here.listEntries().map(\.key).sorted() == ["d", "f"])
        try there.removeAll(taggedWith: "t")
        let report = try here.verify()
        #expect(report.issues.map(\.reason) == ["a tag was removed"])
        #expect(report.removed.count == 1)
        #expect(try here.value(forKey: "d") == Data("d".utf8))
        #expect(try EngineStorage(folder, engine).count() == 1)
    }

    @Test(arguments: ["file", "link"])
    func aDamagedTagsFolderLeavesSweepsWorkingForEveryOtherEntry(damage: String) throws {
        // Given an expired untagged entry, a live untagged one and a tagged one
        let clock = ManualClock()
        let cache = try makeCache(folder, clock: clock)
        try cache.setEntry(CacheEntry(value: Data("e".utf8), expiresAt: clock.now.addingTimeInterval(5)), forKey: "e")
        try cache.setValue(Data("d".utf8), forKey: "d")
        try cache.setEntry(entry("a", tags: ["t"]), forKey: "a")
        clock.advance(by: 10)
        // (the tagged write created its tag's counter, so the sweeps open tagged entries)
        #expect(cache.store.hasTagCounters())
        // When the counters' folder is replaced by a file, or by a link to another folder
        let tags = folder.store.appendingPathComponent("tags")
        try? FileManager.default.removeItem(at: tags)
        if damage == "file" {
            try Data("not a folder".utf8).write(to: tags)
        } else {
            try FileManager.default.createSymbolicLink(at: tags, withDestinationURL: folder.url)
        }
        #expect(cache.store.hasTagCounters())
        // Then the sweeps still drop the expired entry and keep the others (the tagged one unjudged: its
        // counters cannot be read), and listing and verifying do not fail
        #expect(try cache.removeExpired() == 1)
        #expect(try cache.listEntries().map(\.key).sorted() == ["a", "d"])
        #expect(try cache.verify().removed.isEmpty)
        #expect(try cache.value(forKey: "d") == Data("d".utf8))
        #expect(entryFiles(folder).count == 2)
    }

    @Test(arguments: TestStore.engines)
    func aTagRemovalDuringALoadThroughMultiCacheIsNeverUndone(_ engine: Engine) async throws {
        let clock = ManualClock()
        let disk = try makeCache(folder, clock: clock, engine: engine)
        let other = try makeCache(folder, clock: ManualClock(start: clock.now.addingTimeInterval(-10)), engine: engine)
        let cache = MultiCacheProbe(disk)
        let value = try await cache.load(key: "k", tags: ["t"]) {
            try await other.removeAll(taggedWith: "t")
            return Data("loaded".utf8)
        }
        #expect(value == Data("loaded".utf8))
        #expect(try await other.value(forKey: "k") == nil)
        #expect(try await disk.value(forKey: "k") == nil)
    }
}

/// What `MultiCache` does for a tagged load on a `TagVersioningCache` (snapshot, load, stamped store),
/// spelled out here because DiskCacheTests does not depend on MultiCache.
private struct MultiCacheProbe {
    let tier: any TagVersioningCache<String, Data>
    init(_ tier: any TagVersioningCache<String, Data>) { self.tier = tier }

    func load(key: String, tags: Set<String>, _ loader: () async throws -> Data) async throws -> Data {
        let snapshot = try await tier.tagVersions(for: tags)
        let value = try await loader()
        try await tier.setEntry(CacheEntry(value: value, tags: tags), forKey: key, taggedAt: snapshot)
        return value
    }
}

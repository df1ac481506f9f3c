import CacheCore
import CacheTesting
import Foundation
import SealedRecord
import StrataTestSupport
import Testing

@testable import DiskCache

/// A tag counter that is lost (its file or the whole `tags/` folder deleted; its row, or every row of the SQLite
/// engine's `tag` table) must never count through a value an entry was stamped with again: the counter rule of
/// Docs/DiskFormat.md ("Tags", "Counter loss").
@Suite struct DiskCacheTagCounterLossTests {
    let folder = TemporaryFolder()

    private func entry(_ text: String, tags: Set<String>) -> CacheEntry<Data> {
        CacheEntry(value: Data(text.utf8), tags: tags)
    }

    @Test(arguments: TestStore.engines, 0...3)
    func aDeletedTagsFolderNeverBringsBackAnEntryWhoseTagWasRemoved(
        _ engine: Engine, removalsAfterTheLoss: Int
    ) throws {
        // Given two entries of tag "t", one stamped before any removal and one after the first, both removed
        // by later removals of "t" (not read in between, so their files are still on disk)
        let cache = try makeCache(folder, engine: engine)
        try cache.setEntry(entry("first", tags: ["t"]), forKey: "first")
        try cache.removeAll(taggedWith: "t")
        try cache.setEntry(entry("second", tags: ["t"]), forKey: "second")
        try cache.removeAll(taggedWith: "t")
        #expect(try EngineStorage(folder, engine).count() == 2)

        // When the counters are lost and the tag is removed again some number of times
        try EngineStorage(folder, engine).removeAllTagCounters()
        for _ in 0..<removalsAfterTheLoss { try cache.removeAll(taggedWith: "t") }

        // Then neither entry is ever served again, by this instance or a fresh one
        #expect(try cache.value(forKey: "first") == nil)
        #expect(try cache.value(forKey: "second") == nil)
        #expect(try makeCache(folder, engine: engine).value(forKey: "second") == nil)
    }

    @Test(arguments: TestStore.engines, 0...3)
    func aDeletedCounterFileNeverBringsBackAnEntryWhoseTagWasRemoved(
        _ engine: Engine, removalsAfterTheLoss: Int
    ) throws {
        // Given an entry stamped under "t" and removed by a removal of "t", beside a live entry of "u"
        let cache = try makeCache(folder, engine: engine)
        try cache.setEntry(entry("gone", tags: ["t"]), forKey: "gone")
        try cache.setEntry(entry("kept", tags: ["u"]), forKey: "kept")
        let stamped = try cache.tagVersions(for: ["t"]).versions["t"]
        try cache.removeAll(taggedWith: "t")
        let storage = EngineStorage(folder, engine)
        let counterOfT = try #require(
            try storage.tagCounters().first { _, data in
                data.prefix(8).reduce(0) { $0 << 8 | UInt64($1) } == stamped.map { $0 + 1 }
            }?.key)

        // When only the counter of "t" is deleted and "t" is removed again
        try storage.removeTagCounter(named: counterOfT)
        for _ in 0..<removalsAfterTheLoss { try cache.removeAll(taggedWith: "t") }

        // Then the removed entry stays a miss, and the entry of the other tag is untouched
        #expect(try cache.value(forKey: "gone") == nil)
        #expect(try cache.value(forKey: "kept") == Data("kept".utf8))
    }

    @Test(arguments: TestStore.engines)
    func anEntryWrittenAfterTheLossLivesUntilItsTagIsRemovedAgain(_ engine: Engine) throws {
        // Given a store whose counters were lost after a removal
        let cache = try makeCache(folder, engine: engine)
        try cache.removeAll(taggedWith: "t")
        try EngineStorage(folder, engine).removeAllTagCounters()

        // When an entry of "t" is written, it is stamped with a counter created for it, and lives
        try cache.setEntry(entry("fresh", tags: ["t"]), forKey: "k")
        #expect(try cache.value(forKey: "k") == Data("fresh".utf8))
        #expect(try EngineStorage(folder, engine).tagCounters().count == 1)

        // Then a removal of "t" ends it, in this instance and in another one on the folder
        try makeCache(folder, engine: engine).removeAll(taggedWith: "t")
        #expect(try cache.value(forKey: "k") == nil)
    }

    @Test(arguments: TestStore.engines)
    func aCounterIsCreatedAtARandomBaseNotAtASmallCount(_ engine: Engine) throws {
        // Given two stores that each stamp one entry of "t" and remove "t" once
        let other = TemporaryFolder()
        var firstVersions: [UInt64] = []
        for store in [folder, other] {
            let cache = try makeCache(store, engine: engine)
            try cache.setEntry(entry("v", tags: ["t"]), forKey: "k")
            let stamped = try #require(try cache.tagVersions(for: ["t"]).versions["t"])
            try cache.removeAll(taggedWith: "t")
            // Then the removal adds one to the counter the stamp was taken from
            #expect(try cache.tagVersions(for: ["t"]).versions["t"] == stamped + 1)
            firstVersions.append(stamped)
        }
        // And the counters start in the fresh-base range, 2^62 ..< 2^62 + 2^61 (Docs/DiskFormat.md), each at its own
        // value
        let bases = (UInt64(1) << 62)..<((UInt64(1) << 62) + (UInt64(1) << 61))
        #expect(firstVersions.allSatisfy { bases.contains($0) })
        #expect(firstVersions[0] != firstVersions[1])
    }

    @Test(arguments: TestStore.engines)
    func aRecordStampedUnderTheFormerSchemeIsAMissNeverAWrongValue(_ engine: Engine) throws {
        // Given a record as builds before the counter rule wrote it: tag "t" stamped with version 0 while
        // "t" had no counter file (a missing counter then read as 0)
        let cache = try makeCache(folder, engine: engine)
        try cache.engine.write(
            keyBytes: Data("old".utf8), valueBytes: try TagBlock.encode(["t": 0]) + Data("old".utf8),
            expiresAt: nil, cost: nil, staleUntil: nil, hasTags: true)

        // Then it is a miss (a missing counter matches no stamp) and its file is removed
        #expect(try cache.value(forKey: "old") == nil)
        #expect(try EngineStorage(folder, engine).count() == 0)

        // And a record stamped with a counter that exists keeps being served
        let current = try cache.tagVersions(for: ["t"])
        try cache.setEntry(entry("new", tags: ["t"]), forKey: "new", taggedAt: current)
        #expect(try cache.value(forKey: "new") == Data("new".utf8))
    }
}

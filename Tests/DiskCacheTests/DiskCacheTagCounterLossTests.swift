import CacheCore
import CacheTesting
import Foundation
import SealedRecord
import StrataTestSupport
import Testing

@testable import DiskCache

/// A tag counter that is lost (its file or the whole `tags/` folder deleted) must never count through a value
/// an entry was stamped with again: the counter rule of Docs/DiskFormat.md ("Tags", "Counter loss").
@Suite struct DiskCacheTagCounterLossTests {
    let folder = TemporaryFolder()

    private var tagsFolder: URL { folder.store.appendingPathComponent("tags") }

    private func entry(_ text: String, tags: Set<String>) -> CacheEntry<Data> {
        CacheEntry(value: Data(text.utf8), tags: tags)
    }

    @Test(arguments: 0...3)
    func aDeletedTagsFolderNeverBringsBackAnEntryWhoseTagWasRemoved(removalsAfterTheLoss: Int) throws {
        // Given two entries of tag "t", one stamped before any removal and one after the first, both removed
        // by later removals of "t" (not read in between, so their files are still on disk)
        let cache = try makeCache(folder)
        try cache.setEntry(entry("first", tags: ["t"]), forKey: "first")
        try cache.removeAll(taggedWith: "t")
        try cache.setEntry(entry("second", tags: ["t"]), forKey: "second")
        try cache.removeAll(taggedWith: "t")
        #expect(entryFiles(folder).count == 2)

        // When the counters are lost and the tag is removed again some number of times
        try FileManager.default.removeItem(at: tagsFolder)
        for _ in 0..<removalsAfterTheLoss { try cache.removeAll(taggedWith: "t") }

        // Then neither entry is ever served again, by this instance or a fresh one
        #expect(try cache.value(forKey: "first") == nil)
        #expect(try cache.value(forKey: "second") == nil)
        #expect(try makeCache(folder).value(forKey: "second") == nil)
    }

    @Test(arguments: 0...3)
    func aDeletedCounterFileNeverBringsBackAnEntryWhoseTagWasRemoved(removalsAfterTheLoss: Int) throws {
        // Given an entry stamped under "t" and removed by a removal of "t", beside a live entry of "u"
        let cache = try makeCache(folder)
        try cache.setEntry(entry("gone", tags: ["t"]), forKey: "gone")
        try cache.setEntry(entry("kept", tags: ["u"]), forKey: "kept")
        let stamped = try cache.tagVersions(for: ["t"]).versions["t"]
        try cache.removeAll(taggedWith: "t")
        let counterOfT = try #require(
            allFiles(under: tagsFolder).first { name in
                let data = try? Data(contentsOf: tagsFolder.appendingPathComponent(name))
                return data.map { $0.prefix(8).reduce(0) { $0 << 8 | UInt64($1) } } == stamped.map { $0 + 1 }
            })

        // When only the counter of "t" is deleted and "t" is removed again
        try FileManager.default.removeItem(at: tagsFolder.appendingPathComponent(counterOfT))
        for _ in 0..<removalsAfterTheLoss { try cache.removeAll(taggedWith: "t") }

        // Then the removed entry stays a miss, and the entry of the other tag is untouched
        #expect(try cache.value(forKey: "gone") == nil)
        #expect(try cache.value(forKey: "kept") == Data("kept".utf8))
    }

    @Test func anEntryWrittenAfterTheLossLivesUntilItsTagIsRemovedAgain() throws {
        // Given a store whose counters were lost after a removal
        let cache = try makeCache(folder)
        try cache.removeAll(taggedWith: "t")
        try FileManager.default.removeItem(at: tagsFolder)

        // When an entry of "t" is written, it is stamped with a counter created for it, and lives
        try cache.setEntry(entry("fresh", tags: ["t"]), forKey: "k")
        #expect(try cache.value(forKey: "k") == Data("fresh".utf8))
        #expect(allFiles(under: tagsFolder).count == 1)

        // Then a removal of "t" ends it, in this instance and in another one on the folder
        try makeCache(folder).removeAll(taggedWith: "t")
        #expect(try cache.value(forKey: "k") == nil)
    }

    @Test func aCounterIsCreatedAtARandomBaseNotAtASmallCount() throws {
        // Given two stores that each stamp one entry of "t" and remove "t" once
        let other = TemporaryFolder()
        var firstVersions: [UInt64] = []
        for store in [folder, other] {
            let cache = try makeCache(store)
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

    @Test func aRecordStampedUnderTheFormerSchemeIsAMissNeverAWrongValue() throws {
        // Given a record as builds before the counter rule wrote it: tag "t" stamped with version 0 while
        // "t" had no counter file (a missing counter then read as 0)
        let cache = try makeCache(folder)
        try cache.engine.write(
            keyBytes: Data("old".utf8), valueBytes: try TagBlock.encode(["t": 0]) + Data("old".utf8),
            expiresAt: nil, cost: nil, staleUntil: nil, hasTags: true)

        // Then it is a miss (a missing counter matches no stamp) and its file is removed
        #expect(try cache.value(forKey: "old") == nil)
        #expect(entryFiles(folder).isEmpty)

        // And a record stamped with a counter that exists keeps being served
        let current = try cache.tagVersions(for: ["t"])
        try cache.setEntry(entry("new", tags: ["t"]), forKey: "new", taggedAt: current)
        #expect(try cache.value(forKey: "new") == Data("new".utf8))
    }
}

import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// The one tag rule of the sealing tiers (Docs/Tags.md, "The tag rule"), through DiskCache's public API:
/// the empty tag is a tag like any other; one over 65,535 bytes of UTF-8 is refused, never truncated.
@Suite struct DiskCacheTagRuleTests {
    let folder = TemporaryFolder()

    @Test(arguments: TestStore.engines)
    func theEmptyTagIsStoredReturnedAndRemovedLikeAnyOther(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        try cache.setEntry(CacheEntry(value: Data("a".utf8), tags: [""]), forKey: "a")
        try cache.setEntry(CacheEntry(value: Data("b".utf8), tags: ["", "b"]), forKey: "b")
        try cache.setEntry(CacheEntry(value: Data("c".utf8), tags: ["c"]), forKey: "c")
        #expect(try cache.entry(forKey: "b")?.tags == ["", "b"])
        let before = try #require(try cache.tagVersions(for: [""]).versions[""])

        try cache.removeAll(taggedWith: "")

        #expect(try cache.value(forKey: "a") == nil)
        #expect(try cache.value(forKey: "b") == nil)
        #expect(try cache.value(forKey: "c") == Data("c".utf8))
        #expect(try cache.tagVersions(for: [""]).versions == ["": before + 1])
    }

    @Test(arguments: TestStore.engines)
    func aTagOfExactly65535BytesIsKept(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        let longest = String(repeating: "t", count: 65_535)
        try cache.setEntry(CacheEntry(value: Data("v".utf8), tags: [longest]), forKey: "k")
        #expect(try cache.entry(forKey: "k")?.tags == [longest])
    }

    @Test(arguments: TestStore.engines)
    func aTagOverTheLimitIsRefusedWithInvalidArgumentAndChangesNothing(_ engine: Engine) throws {
        // Given an entry already stored for the key
        let cache = try makeCache(folder, engine: engine)
        try cache.setValue(Data("earlier".utf8), forKey: "k")
        let tooLong = String(repeating: "t", count: 65_536)

        // When a write, a snapshot and a removal are given the over-long tag
        let write = #expect(throws: CacheError.self) {
            try cache.setEntry(CacheEntry(value: Data("new".utf8), tags: ["ok", tooLong]), forKey: "k")
        }
        let snapshot = #expect(throws: CacheError.self) { try cache.tagVersions(for: [tooLong]) }
        let removal = #expect(throws: CacheError.self) { try cache.removeAll(taggedWith: tooLong) }

        // Then each is refused as an invalid argument, the earlier value stays and no counter was written
        #expect(write?.code == .invalidArgument)
        #expect(snapshot?.code == .invalidArgument)
        #expect(removal?.code == .invalidArgument)
        #expect(try cache.value(forKey: "k") == Data("earlier".utf8))
        #expect(!FileManager.default.fileExists(atPath: folder.store.appendingPathComponent("tags").path))
        #expect(try EngineStorage(folder, engine).tagCounters().isEmpty)
    }
}

import CacheCore
import CacheTesting
import Foundation
import SealedRecord
import StrataTestSupport
import Testing

@testable import DiskCache

/// One tag, one spelling on disk (Docs/DiskFormat.md, "Tags"): a tag's counter is named by its NFC bytes, and a
/// record an earlier build stamped under another spelling's bytes is a miss, never served.
@Suite struct DiskCacheTagSpellingTests {
    let folder = TemporaryFolder()

    @Test(arguments: TestStore.engines)
    func bothSpellingsOfATagShareOneCounter(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        #expect(
            try cache.tagCounters.fileName(of: "caf\u{E9}") == cache.tagCounters.fileName(of: "cafe\u{301}")
        )
        let composed = try cache.tagVersions(for: ["caf\u{E9}"])
        #expect(try cache.tagVersions(for: ["cafe\u{301}"]).versions["caf\u{E9}"] == composed.versions["caf\u{E9}"])
        #expect(try EngineStorage(folder, engine).tagCounters().count == 1)
    }

    @Test(arguments: TestStore.engines)
    func aRecordStampedUnderTheDecomposedBytesIsAMiss(_ engine: Engine) throws {
        // Given the counter of "café" at some version, and a record as an earlier build wrote it for the
        // decomposed spelling: its block names "cafe" + U+0301 and carries that same version
        let cache = try makeCache(folder, engine: engine)
        let version = try #require(try cache.tagVersions(for: ["caf\u{E9}"]).versions["caf\u{E9}"])
        let name = Array("cafe\u{301}".utf8)
        var block: [UInt8] = [0x00, 0x01, 0x00, UInt8(name.count)] + name
        block += withUnsafeBytes(of: version.bigEndian) { Array($0) }
        try cache.engine.write(
            keyBytes: Data("old".utf8), valueBytes: Data(block) + Data("old".utf8), expiresAt: nil, cost: nil,
            staleUntil: nil, hasTags: true)

        // Then it is a miss (its stamp came from a counter no removal reaches now) and its file is removed,
        // while a record stamped now under either spelling is served
        #expect(try cache.value(forKey: "old") == nil)
        #expect(try EngineStorage(folder, engine).count() == 0)
        try cache.setEntry(CacheEntry(value: Data("new".utf8), tags: ["cafe\u{301}"]), forKey: "new")
        #expect(try cache.value(forKey: "new") == Data("new".utf8))
    }
}

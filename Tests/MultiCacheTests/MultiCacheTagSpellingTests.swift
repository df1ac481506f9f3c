import CacheCore
import CacheTesting
import DiskCache
import Foundation
import MemoryCache
import MultiCache
import StrataTestSupport
import Testing

/// One tag, one spelling: "é" composed (NFC) and decomposed (NFD) are one tag in every tier, as they are one
/// `String` and one key (Docs/Tags.md, "The tag rule").
@Suite(.timeLimit(.minutes(10)))
struct MultiCacheTagSpellingTests {
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test(arguments: [(composed, decomposed), (decomposed, composed)])
    func removingATagSpelledTheOtherWayMissesItsEntryInTheMemoryAndDiskTiers(
        stamped: String, removed: String
    ) async throws {
        // Given a memory tier over a disk tier, an entry tagged with one spelling and one with another tag
        #expect(stamped == removed && Array(stamped.utf8) != Array(removed.utf8))
        let folder = TemporaryFolder(label: "tag-spelling")
        let clock = ManualClock()
        let disk = try DiskCache<String, Data>(
            configuration: DiskCacheConfiguration(
                name: "tag-spelling", directory: folder.url,
                masterKeySource: .masterKey(Data((0..<32).map { UInt8($0) })), clock: clock))
        let memory = try MemoryCache<String, Data>(clock: clock)
        let cache = try MultiCache<String, Data>([memory, disk])
        try await cache.setValue(Data("tagged".utf8), forKey: "k", expiry: .never, tags: [stamped])
        try await cache.setValue(Data("other".utf8), forKey: "other", expiry: .never, tags: ["cafe"])

        // When the tag is removed with the other spelling
        try await cache.removeAll(taggedWith: removed)

        // Then the entry is a miss in every tier, the disk tier read on its own included, and the other stays
        #expect(try await cache.value(forKey: "k") == nil)
        #expect(memory.value(forKey: "k") == nil)
        #expect(try await disk.value(forKey: "k") == nil)
        #expect(try await cache.value(forKey: "other") == Data("other".utf8))

        // And a new entry with either spelling lives until either spelling is removed again
        try await cache.setValue(Data("again".utf8), forKey: "k", expiry: .never, tags: [removed])
        #expect(try await disk.entry(forKey: "k")?.tags == [stamped])
        try await cache.removeAll(taggedWith: stamped)
        #expect(try await disk.value(forKey: "k") == nil)
    }
}

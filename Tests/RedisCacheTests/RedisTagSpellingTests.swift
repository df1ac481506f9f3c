import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import MultiCache
import StrataTestSupport
import Testing

@testable import RedisCache

/// One tag, one spelling, on a real server: "é" composed (NFC) and decomposed (NFD) name one version key, as
/// they are one `String` in the memory tier (Docs/Tags.md, "The tag rule").
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote), .serialized, .timeLimit(.minutes(10)))
struct RedisTagSpellingTests {
    static let composed = "caf\u{E9}"
    static let decomposed = "cafe\u{301}"

    @Test(arguments: [(composed, decomposed), (decomposed, composed)])
    func removingATagSpelledTheOtherWayMissesItsEntryInTheMemoryAndRedisTiers(
        stamped: String, removed: String
    ) async throws {
        // Given a memory tier over a Redis tier, an entry tagged with one spelling and one with another tag
        let server = try RedisServer()
        let redis = try RedisCache<String, String>(configuration: RedisTier.configuration(port: server.port))
        let memory = try MemoryCache<String, String>()
        let cache = try MultiCache<String, String>([memory, redis])
        try await cache.setValue("tagged", forKey: "k", expiry: .never, tags: [stamped])
        try await cache.setValue("other", forKey: "other", expiry: .never, tags: ["cafe"])

        // When the tag is removed with the other spelling
        try await cache.removeAll(taggedWith: removed)

        // Then the entry is a miss in every tier, Redis read on its own and by a fresh client included
        #expect(try await cache.value(forKey: "k") == nil)
        #expect(memory.value(forKey: "k") == nil)
        #expect(try await redis.value(forKey: "k") == nil)
        let fresh = try RedisCache<String, String>(configuration: redis.configuration)
        #expect(try await fresh.value(forKey: "k") == nil)
        #expect(try await cache.value(forKey: "other") == "other")

        // And the entry's tag reads back in NFC whatever spelling it was written with
        try await cache.setValue("again", forKey: "k", expiry: .never, tags: [removed])
        #expect(try await fresh.entry(forKey: "k")?.tags.map { Array($0.utf8) } == [Array(Self.composed.utf8)])
        await redis.close()
        await fresh.close()
    }
}

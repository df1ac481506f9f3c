import CacheCore
import Foundation
import StrataTestSupport
import Testing

@testable import RedisCache

/// The one tag rule of the sealing tiers (Docs/Tags.md, "The tag rule"), through RedisCache's public API
/// against a real server: the empty tag is a tag like any other; one over 65,535 bytes of UTF-8 is refused
/// before anything is sent (earlier builds truncated its length to 16 bits and sealed an envelope no reader
/// could split).
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote), .serialized, .timeLimit(.minutes(10)))
struct RedisTagRuleTests {
    @Test func theEmptyTagIsStoredReturnedAndRemovedLikeAnyOther() async throws {
        let server = try RedisServer()
        let redis = try RedisCache<String, String>(configuration: RedisTier.configuration(port: server.port))
        try await redis.setEntry(CacheEntry(value: "a", tags: [""]), forKey: "a")
        try await redis.setEntry(CacheEntry(value: "b", tags: ["", "b"]), forKey: "b")
        try await redis.setEntry(CacheEntry(value: "c", tags: ["c"]), forKey: "c")
        #expect(try await redis.entry(forKey: "b")?.tags == ["", "b"])
        let before = try #require(try await redis.tagVersions(for: [""]).versions[""])

        try await redis.removeAll(taggedWith: "")

        #expect(try await redis.value(forKey: "a") == nil)
        #expect(try await redis.value(forKey: "b") == nil)
        #expect(try await redis.value(forKey: "c") == "c")
        #expect(try await redis.tagVersions(for: [""]).versions == ["": before + 1])
    }

    @Test func aTagOfExactly65535BytesIsKept() async throws {
        let server = try RedisServer()
        let redis = try RedisCache<String, String>(configuration: RedisTier.configuration(port: server.port))
        let longest = String(repeating: "t", count: 65_535)
        try await redis.setEntry(CacheEntry(value: "v", tags: [longest]), forKey: "k")
        #expect(try await redis.entry(forKey: "k")?.tags == [longest])
    }

    @Test func aTagOverTheLimitIsRefusedWithInvalidArgumentAndChangesNothing() async throws {
        // Given an entry already stored for the key
        let server = try RedisServer()
        let redis = try RedisCache<String, String>(configuration: RedisTier.configuration(port: server.port))
        try await redis.setValue("earlier", forKey: "k")
        let tooLong = String(repeating: "t", count: 65_536)

        // When a write, a load's store, a snapshot and a removal are given the over-long tag
        let write = await #expect(throws: CacheError.self) {
            try await redis.setEntry(CacheEntry(value: "new", tags: ["ok", tooLong]), forKey: "k")
        }
        let load = await #expect(throws: CacheError.self) {
            try await redis.setEntry(
                CacheEntry(value: "loaded", tags: [tooLong]), forKey: "k", taggedAt: CacheTagVersions([:]))
        }
        let snapshot = await #expect(throws: CacheError.self) { try await redis.tagVersions(for: [tooLong]) }
        let removal = await #expect(throws: CacheError.self) { try await redis.removeAll(taggedWith: tooLong) }

        // Then each is refused as an invalid argument and the earlier value stays
        for error in [write, load, snapshot, removal] { #expect(error?.code == .invalidArgument) }
        #expect(try await redis.value(forKey: "k") == "earlier")
        // (no version key was created either: a snapshot of "ok" finds none)
        #expect(try await redis.currentTagVersions(of: ["ok"]).isEmpty)
    }
}

import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import RedisCache

/// A fencing counter that Redis loses (evicted under `allkeys-lru`, deleted with `DEL`) must never count through
/// a value an entry was sealed or stamped with again: the counter rule of Docs/RedisCache.md ("Counters").
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote), .serialized, .timeLimit(.minutes(10)))
struct RedisCounterLossTests {
    /// The names of the namespace's tag version keys (`…:t:…`).
    private static func tagKeys(_ raw: RawRedis) async throws -> [[UInt8]] {
        try await raw.allKeys().filter { $0.contains(bytes: Array(":t:".utf8)) }
    }

    @Test func sixtyFourConcurrentRepairsOfAnEpochFarBelowNeitherOverflowNorAddUp() async throws {
        // Given an instance that has seen its epoch near the top of the fresh bases' range
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let cache = try RedisCache<String, String>(configuration: RedisTier.configuration(port: server.port))
        let namespace = cache.configuration.namespace
        let epochName = "strata:v2:\(namespace):{\(namespace)}:epoch"
        let seen: UInt64 = (1 << 62) + (1 << 61) - 1
        _ = try await raw.send("SET", epochName, String(seen))
        try await cache.setValue("v", forKey: "k")
        // When the counter comes back recreated at the bottom of that range (as after a failover that lost it),
        // and 64 tasks that each read it that low repair it at once
        let low = UInt64(1) << 62
        _ = try await raw.send("SET", epochName, String(low))
        let failures = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    do {
                        _ = try await cache.repairEpoch(low, above: seen)
                        return 0
                    } catch {
                        return 1
                    }
                }
            }
            return await group.reduce(0, +)
        }
        // Then no repair failed, and the counter was raised just above
        // what the instance had seen: each repair raised it to a target, none added the 2^61 gap (64 of those
        // would overflow the server's 64-bit counter, as INCRBY did)
        #expect(failures == 0)
        let counter = try #require(UInt64(try await raw.send("GET", epochName).string ?? ""))
        #expect(counter > seen && counter <= seen + (1 << 32))
        #expect(try await cache.value(forKey: "k") == nil)
        await cache.close()
    }

    @Test(arguments: 0...3)
    func aDeletedTagCounterNeverBringsBackAnEntryWhoseTagWasRemoved(removalsAfterTheLoss: Int) async throws {
        // Given two entries of tag "t", one stamped before any removal and one after the first, both removed
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let cache = try RedisCache<String, String>(configuration: RedisTier.configuration(port: server.port))
        try await cache.setEntry(CacheEntry(value: "first", tags: ["t"]), forKey: "first")
        try await cache.removeAll(taggedWith: "t")
        try await cache.setEntry(CacheEntry(value: "second", tags: ["t"]), forKey: "second")
        try await cache.removeAll(taggedWith: "t")

        // When the tag's version key is deleted (as redis-cli DEL or an eviction would) and "t" is removed again
        let names = try await Self.tagKeys(raw)
        #expect(names.count == 1)
        for name in names { _ = try await raw.send([Array("DEL".utf8), name]) }
        for _ in 0..<removalsAfterTheLoss { try await cache.removeAll(taggedWith: "t") }

        // Then neither entry is ever served again, by this client or a fresh one
        #expect(try await cache.value(forKey: "first") == nil)
        #expect(try await cache.value(forKey: "second") == nil)
        let fresh = try RedisCache<String, String>(configuration: cache.configuration)
        #expect(try await fresh.value(forKey: "second") == nil)
        await cache.close()
        await fresh.close()
    }

    @Test(arguments: 0...3)
    func aDeletedEpochCounterNeverBringsBackAClearedEntryForANewClient(clearsAfterTheLoss: Int) async throws {
        // Given an entry sealed before a removeAll() and one after it, both cleared
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let cache = try RedisCache<String, String>(configuration: RedisTier.configuration(port: server.port))
        try await cache.setValue("first", forKey: "first")
        try await cache.removeAll()
        try await cache.setValue("second", forKey: "second")
        try await cache.removeAll()
        await cache.close()

        // When the epoch key is lost, and a client that never saw the old epochs clears some number of times
        let namespace = cache.configuration.namespace
        let epochName = "strata:v2:\(namespace):{\(namespace)}:epoch"
        _ = try await raw.send("DEL", epochName)
        let fresh = try RedisCache<String, String>(configuration: cache.configuration)
        for _ in 0..<clearsAfterTheLoss { try await fresh.removeAll() }
        // (a clear of the missing counter starts it at a fresh base, never at 1)
        if clearsAfterTheLoss > 0 {
            let epoch = try await RedisCacheTests.counter(raw, epochName)
            #expect(epoch.map { $0 >= UInt64(1) << 62 } == true)
        }

        // Then neither cleared entry comes back
        #expect(try await fresh.value(forKey: "first") == nil)
        #expect(try await fresh.value(forKey: "second") == nil)
        #expect(try await fresh.entries(forKeys: ["first", "second"]).isEmpty)
        await fresh.close()
    }

    @Test func whileTheEpochKeyIsMissingNothingIsServedAndTheNextWriteStartsAFreshEpoch() async throws {
        // Given a live entry and then the epoch key lost
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let cache = try RedisCache<String, String>(configuration: RedisTier.configuration(port: server.port))
        try await cache.setValue("before", forKey: "before")
        let epochKey = "strata:v2:\(cache.configuration.namespace):{\(cache.configuration.namespace)}:epoch"
        _ = try await raw.send("DEL", epochKey)

        // Then a client that never read the epoch serves nothing sealed before the loss
        let fresh = try RedisCache<String, String>(configuration: cache.configuration)
        #expect(try await fresh.value(forKey: "before") == nil)
        #expect(try await raw.send("GET", epochKey) == .null)

        // When it writes, the epoch key is created again, at a fresh base, and the write is served
        try await fresh.setValue("after", forKey: "after")
        guard case .bulkString(let bytes) = try await raw.send("GET", epochKey),
            let epoch = UInt64(String(decoding: bytes, as: UTF8.self))
        else {
            Issue.record("the write did not create the epoch key")
            return
        }
        #expect(epoch >= UInt64(1) << 62)
        #expect(try await fresh.value(forKey: "after") == "after")
        #expect(try await fresh.value(forKey: "before") == nil)

        // And a removeAll() ends it, for both clients
        try await cache.removeAll()
        #expect(try await fresh.value(forKey: "after") == nil)
        #expect(try await cache.value(forKey: "after") == nil)
        await cache.close()
        await fresh.close()
    }

    @Test func aTaggedEntryWrittenAfterTheLossLivesUntilItsTagIsRemovedAgain() async throws {
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let cache = try RedisCache<String, String>(configuration: RedisTier.configuration(port: server.port))
        try await cache.removeAll(taggedWith: "t")
        // (a removal of a tag that had no version key created it at a fresh base, never at 1)
        let names = try await Self.tagKeys(raw)
        #expect(names.count == 1)
        for name in names {
            guard case .bulkString(let bytes) = try await raw.send([Array("GET".utf8), name]) else { continue }
            #expect(UInt64(String(decoding: bytes, as: UTF8.self)).map { $0 >= UInt64(1) << 62 } == true)
        }
        for name in names { _ = try await raw.send([Array("DEL".utf8), name]) }

        // When an entry of "t" is written while its counter is missing, the counter is created and it lives
        try await cache.setEntry(CacheEntry(value: "fresh", tags: ["t"]), forKey: "k")
        #expect(try await cache.value(forKey: "k") == "fresh")
        #expect(try await Self.tagKeys(raw).count == 1)

        // Then a removal of "t" by another client ends it
        let other = try RedisCache<String, String>(configuration: cache.configuration)
        try await other.removeAll(taggedWith: "t")
        #expect(try await cache.value(forKey: "k") == nil)
        await cache.close()
        await other.close()
    }
}

import CacheCore
import CacheTesting
import Foundation
import RedisCache
import StrataTestSupport
import Testing

/// Issue 17 on the Redis tier: an entry with a stale-until instant is kept by the server (`PX`) until then
/// and read only by the load path; envelopes without one are the earlier format; a bulk read is one `MGET`.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisCacheStaleAndBulkTests {
    @Test func aStaleEntryIsKeptByTheServerAndReadOnlyByTheLoadPath() async throws {
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let clock = ManualClock()
        let cache = try RedisCache<String, Data>(
            configuration: try RedisTier.configuration(port: server.port, clock: clock))
        let now = clock.now
        try await cache.setEntry(
            CacheEntry(value: Data("v".utf8), expiresAt: now + 10, staleUntil: now + 70), forKey: "k")
        let name = try #require(try await raw.allKeys().first { $0.contains(bytes: Array(":k:".utf8)) })
        // The server's TTL runs to the stale-until instant, not the expiry
        guard case .integer(let ttl) = try await raw.send([Array("PTTL".utf8), name]) else {
            Issue.record("no PTTL")
            return
        }
        #expect(ttl > 60_000 && ttl <= 70_000)

        clock.advance(by: 30)
        #expect(try await cache.value(forKey: "k") == nil)
        let stale = try #require(try await cache.entryIncludingStale(forKey: "k"))
        #expect(stale.value == Data("v".utf8))
        #expect(stale.expiresAt == now + 10)
        #expect(stale.staleUntil == now + 70)
        // The plain miss left it in place
        #expect(try await raw.get(name) != nil)

        clock.advance(by: 40)
        #expect(try await cache.entryIncludingStale(forKey: "k") == nil)
        #expect(try await raw.get(name) == nil)
        await cache.close()
    }

    @Test func anEntryWithoutStaleRetentionKeepsItsExpiryAsTheServersTimeToLive() async throws {
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let clock = ManualClock()
        let cache = try RedisCache<String, Data>(
            configuration: try RedisTier.configuration(port: server.port, clock: clock))
        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .seconds(10))
        let name = try #require(try await raw.allKeys().first { $0.contains(bytes: Array(":k:".utf8)) })
        guard case .integer(let ttl) = try await raw.send([Array("PTTL".utf8), name]) else {
            Issue.record("no PTTL")
            return
        }
        #expect(ttl > 0 && ttl <= 10_000)
        #expect(try await cache.entry(forKey: "k")?.staleUntil == nil)
        await cache.close()
    }

    @Test func aBulkReadIsOneMGET() async throws {
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let cache = try RedisCache<String, Data>(configuration: try RedisTier.configuration(port: server.port))
        for index in 0..<20 { try await cache.setValue(Data("\(index)".utf8), forKey: "key-\(index)") }
        _ = try await cache.entry(forKey: "warm-up")
        let before = try await raw.calls(of: "mget")

        let found = try await cache.entries(forKeys: (0..<50).map { "key-\($0)" } + ["key-3"])

        #expect(try await raw.calls(of: "mget") - before == 1)
        #expect(found.count == 20)
        #expect(found["key-7"]?.value == Data("7".utf8))
        #expect(try await cache.values(forKeys: ["key-1", "absent"]) == ["key-1": Data("1".utf8)])
        await cache.close()
    }
}

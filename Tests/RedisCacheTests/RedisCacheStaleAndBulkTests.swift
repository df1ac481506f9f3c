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
    /// Whole milliseconds of real time since `start`.
    static func milliseconds(since start: ContinuousClock.Instant) -> Int {
        let elapsed = ContinuousClock.now - start
        return Int(elapsed.components.seconds) * 1_000 + Int(elapsed.components.attoseconds / 1_000_000_000_000_000)
    }

    @Test(arguments: RedisEndpoint.Kind.allCases)
    func aStaleEntryIsKeptByTheServerAndReadOnlyByTheLoadPath(over kind: RedisEndpoint.Kind) async throws {
        let endpoint = try RedisEndpoint(kind)
        let server = endpoint.server
        let raw = try RawRedis(port: server.port)
        let clock = ManualClock()
        let cache = try RedisCache<String, Data>(
            configuration: try RedisTier.configuration(endpoint: endpoint, clock: clock))
        let now = clock.now
        // An hour of stale retention: the server's own clock runs while the test runs, and a stalled
        // machine (seen: 42 s) must not let the key expire on the server before the checks below.
        let written = ContinuousClock.now
        try await cache.setEntry(
            CacheEntry(value: Data("v".utf8), expiresAt: now + 10, staleUntil: now + 3_600), forKey: "k")
        let name = try #require(try await raw.allKeys().first { $0.contains(bytes: Array(":k:".utf8)) })
        // The server's TTL runs to the stale-until instant, not the expiry: less only by the time spent
        guard case .integer(let ttl) = try await raw.send([Array("PTTL".utf8), name]) else {
            Issue.record("no PTTL")
            return
        }
        #expect(ttl > 3_600_000 - Self.milliseconds(since: written) - 1_000 && ttl <= 3_600_000)

        clock.advance(by: 30)
        #expect(try await cache.value(forKey: "k") == nil)
        let stale = try #require(try await cache.entryIncludingStale(forKey: "k"))
        #expect(stale.value == Data("v".utf8))
        #expect(stale.expiresAt == now + 10)
        #expect(stale.staleUntil == now + 3_600)
        // The plain miss left it in place
        #expect(try await raw.get(name) != nil)

        clock.advance(by: 3_600)
        #expect(try await cache.entryIncludingStale(forKey: "k") == nil)
        #expect(try await raw.get(name) == nil)
        await cache.close()
    }

    @Test(arguments: RedisEndpoint.Kind.allCases)
    func anEntryWithoutStaleRetentionKeepsItsExpiryAsTheServersTimeToLive(over kind: RedisEndpoint.Kind) async throws {
        let endpoint = try RedisEndpoint(kind)
        let server = endpoint.server
        let raw = try RawRedis(port: server.port)
        let clock = ManualClock()
        let cache = try RedisCache<String, Data>(
            configuration: try RedisTier.configuration(endpoint: endpoint, clock: clock))
        // An hour, not seconds: the server's clock runs on while a stalled machine (seen: 42 s) delays the
        // PTTL below, and a key expired on the server would have no TTL left to check.
        let written = ContinuousClock.now
        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .seconds(3_600))
        let name = try #require(try await raw.allKeys().first { $0.contains(bytes: Array(":k:".utf8)) })
        guard case .integer(let ttl) = try await raw.send([Array("PTTL".utf8), name]) else {
            Issue.record("no PTTL")
            return
        }
        // The expiry's lifetime, less only the time spent since the write
        #expect(ttl > 3_600_000 - Self.milliseconds(since: written) - 1_000 && ttl <= 3_600_000)
        #expect(try await cache.entry(forKey: "k")?.staleUntil == nil)
        await cache.close()
    }

    @Test(arguments: RedisEndpoint.Kind.allCases)
    func aBulkReadIsOneMGET(over kind: RedisEndpoint.Kind) async throws {
        let endpoint = try RedisEndpoint(kind)
        let server = endpoint.server
        let raw = try RawRedis(port: server.port)
        let cache = try RedisCache<String, Data>(configuration: try RedisTier.configuration(endpoint: endpoint))
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

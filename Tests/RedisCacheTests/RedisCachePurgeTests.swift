import CacheCore
import CacheTesting
import Foundation
import Testing

@testable import RedisCache

/// Issue 15, "optional background purge of old epochs": `SCAN … MATCH` + header reads + `UNLINK` of
/// entries sealed under an older epoch; nothing else is touched.
@Suite struct RedisCachePurgeSettingTests {
    @Test func thePurgeIsOffByDefault() throws {
        #expect(RedisCacheConfiguration(namespace: "n").purgeInterval == nil)
        let cache = try RedisCache<String, Data>(configuration: try RedisTier.configuration(port: 6379))
        #expect(cache.purgeTask.withLock { $0 } == nil)
    }

    @Test(arguments: [Duration.zero, .seconds(-1)])
    func aPurgeIntervalThatIsNotPositiveIsAnInvalidArgument(interval: Duration) throws {
        var configuration = try RedisTier.configuration(port: 6379)
        configuration.purgeInterval = interval
        let error = #expect(throws: CacheError.self) { try RedisCache<String, Data>(configuration: configuration) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("purgeInterval") == true)
    }

    @Test func anEnvelopeHeaderTellsItsEpochAndOtherBytesDoNot() {
        let header: [UInt8] = [Envelope.version, 0b1, 0, 0, 0, 0, 0, 0, 1, 2]
        #expect(RedisCache<String, Data>.epoch(ofHeader: header) == 258)
        #expect(RedisCache<String, Data>.epoch(ofHeader: [9] + header.dropFirst()) == nil)
        #expect(RedisCache<String, Data>.epoch(ofHeader: [Envelope.version, 0b1000] + header.dropFirst(2)) == nil)
        #expect(RedisCache<String, Data>.epoch(ofHeader: Array(header.prefix(9))) == nil)
        #expect(RedisCache<String, Data>.epoch(ofHeader: Array("hello worl".utf8)) == nil)
    }
}

@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisCachePurgeTests {
    @Test func aPurgeRemovesOnlyEntriesOfOlderEpochs() async throws {
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let configuration = try RedisTier.configuration(port: server.port)
        let cache = try RedisCache<Int, Data>(configuration: configuration)
        // 250 entries: more than one SCAN step of COUNT 100.
        for key in 0..<250 { try await cache.setValue(Data("old \(key)".utf8), forKey: key) }
        try await cache.removeAll()
        for key in 1000..<1010 { try await cache.setValue(Data("new \(key)".utf8), forKey: key) }
        // A value of another format under an entry-shaped name, and a key of another namespace.
        let prefix = "strata:v2:\(configuration.namespace):"
        let foreign = Array((prefix + "k:{" + String(repeating: "A", count: 22) + "}").utf8)
        _ = try await raw.send([Array("SET".utf8), foreign, Array("not an envelope, left alone".utf8)])
        _ = try await raw.send("SET", "strata:v2:other:k:{AAAAAAAAAAAAAAAAAAAAAA}", "x")
        #expect(try await raw.allKeys().count == 250 + 10 + 2 + 2)

        #expect(try await cache.purgeOldEpochs() == 250)

        let left = Set(try await raw.allKeys().map { String(decoding: $0, as: UTF8.self) })
        #expect(left.count == 10 + 2 + 2)
        #expect(left.contains(String(decoding: foreign, as: UTF8.self)))
        #expect(left.contains("strata:v2:other:k:{AAAAAAAAAAAAAAAAAAAAAA}"))
        #expect(left.contains(prefix + "{\(configuration.namespace)}:epoch"))
        for key in 1000..<1010 { #expect(try await cache.value(forKey: key) == Data("new \(key)".utf8)) }
        // A second pass finds nothing; never KEYS or FLUSHDB.
        #expect(try await cache.purgeOldEpochs() == 0)
        #expect(try await raw.calls(of: "scan") >= 3)
        #expect(try await raw.calls(of: "unlink") >= 1)
        #expect(try await raw.calls(of: "keys") == 0)
        #expect(try await raw.calls(of: "flushdb") == 0)
        #expect(try await raw.calls(of: "flushall") == 0)
        await cache.close()
    }

    @Test func aPurgeWithAnotherMasterKeyRemovesNothing() async throws {
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let owner = try RedisTier.configuration(port: server.port)
        let cache = try RedisCache<Int, Data>(configuration: owner)
        for key in 0..<5 { try await cache.setValue(Data([UInt8(key)]), forKey: key) }
        try await cache.removeAll()
        var other = owner
        other.masterKeySource = .masterKey(RedisTier.randomMasterKey())
        let stranger = try RedisCache<Int, Data>(configuration: other)
        let error = await #expect(throws: CacheError.self) { try await stranger.purgeOldEpochs() }
        #expect(error?.code == .wrongMasterKey)
        #expect(try await raw.allKeys().count == 5 + 2)
        #expect(try await cache.purgeOldEpochs() == 5)
        await stranger.close()
        await cache.close()
    }

    @Test func theBackgroundPurgeRunsOneStepPerIntervalOfTheClockAndStopsWithTheCache() async throws {
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let clock = ManualClock()
        var configuration = try RedisTier.configuration(port: server.port, clock: clock)
        configuration.purgeInterval = .seconds(60)
        let cache = try RedisCache<Int, Data>(configuration: configuration)
        for key in 0..<5 { try await cache.setValue(Data([UInt8(key)]), forKey: key) }
        try await cache.removeAll()
        try await cache.setValue(Data("kept".utf8), forKey: 99)
        #expect(try await raw.allKeys().count == 6 + 2)

        await clock.waitForSleepers(count: 1)
        #expect(cache.purgeTicks.withLock { $0 } == 0)
        clock.advance(by: .seconds(60))
        // The task sleeps again once its step is done.
        await clock.waitForSleepers(count: 2)
        #expect(cache.purgeTicks.withLock { $0 } == 1)
        #expect(try await raw.allKeys().count == 1 + 2)
        #expect(try await cache.value(forKey: 99) == Data("kept".utf8))

        await cache.close()
        #expect(cache.purgeTask.withLock { $0?.isCancelled } == true)
    }
}

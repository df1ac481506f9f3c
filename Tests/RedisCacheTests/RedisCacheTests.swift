import CacheTesting
import Foundation
import RedisCache
import StrataTestSupport
import Testing

/// The tier on a real server: round trips, expiry against the server's TTL, the epoch `removeAll`, and
/// what Redis gets to see.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisCacheTests {
    struct Profile: Codable, Equatable, Sendable {
        var name: String
        var scores: [Int]
    }

    struct ProfileKey: Codable, Hashable, Sendable, CacheKey {
        var tenant: String
        var id: Int
    }

    @Test func dataAndCodableValuesRoundTrip() async throws {
        let server = try RedisServer()
        let configuration = try RedisTier.configuration(port: server.port)
        let data = try RedisCache<String, Data>(configuration: configuration)
        let bytes = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try await data.setEntry(CacheEntry(value: bytes, cost: 17), forKey: "blob")
        let entry = try await data.entry(forKey: "blob")
        #expect(entry?.value == bytes)
        #expect(entry?.cost == 17)
        #expect(entry?.expiresAt == nil)

        let profiles = try RedisCache<ProfileKey, Profile>(configuration: configuration)
        let key = ProfileKey(tenant: "acme", id: 7)
        try await profiles.setValue(Profile(name: "Ada", scores: [3, 1, 4]), forKey: key, expiry: .hours(1))
        #expect(try await profiles.value(forKey: key) == Profile(name: "Ada", scores: [3, 1, 4]))
        #expect(try await profiles.value(forKey: ProfileKey(tenant: "acme", id: 8)) == nil)
        #expect(profiles.statistics.hits == 1)
        #expect(profiles.statistics.misses == 1)
        #expect(profiles.statistics.insertions == 1)
        await data.close()
        await profiles.close()
    }

    @Test func theServersTimeToLiveFollowsTheAbsoluteExpiry() async throws {
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let clock = ManualClock()
        let cache = try RedisCache<String, Data>(
            configuration: try RedisTier.configuration(port: server.port, clock: clock))
        // Given an entry written with an hour to live, and one without expiry (an hour, not a minute: a
        // stalled run must not see the server drop the key before it is looked at)
        try await cache.setValue(Data("a".utf8), forKey: "soon", expiry: .hours(1))
        try await cache.setValue(Data("b".utf8), forKey: "never", expiry: .never)
        let names = try await raw.allKeys().filter { $0.contains(bytes: Array(":k:".utf8)) }
        #expect(names.count == 2)
        var ttls: [Int64] = []
        for name in names {
            if case .integer(let ttl) = try await raw.send([Array("PTTL".utf8), name]) { ttls.append(ttl) }
        }
        // Then the server holds them for an hour and for the 7-day maximum (less what a stall took)
        ttls.sort()
        #expect(ttls.count == 2)
        #expect(ttls.first.map { $0 > 3_000_000 && $0 <= 3_600_000 } == true)
        #expect(ttls.last.map { $0 > 7 * 86_400_000 - 600_000 && $0 <= 7 * 86_400_000 } == true)
        // When the tier's clock reaches the expiry, the entry is a miss and its key is gone
        clock.advance(by: 3_599.999)
        #expect(try await cache.value(forKey: "soon") == Data("a".utf8))
        clock.advance(by: 0.001)
        #expect(try await cache.value(forKey: "soon") == nil)
        #expect(try await raw.allKeys().filter { $0.contains(bytes: Array(":k:".utf8)) }.count == 1)
        // And an entry already expired when set is not written, and removes the key
        try await cache.setEntry(CacheEntry(value: Data("c".utf8), expiresAt: clock.now), forKey: "never")
        #expect(try await raw.allKeys().filter { $0.contains(bytes: Array(":k:".utf8)) }.isEmpty)
        #expect(try await cache.value(forKey: "never") == nil)
        await cache.close()
        await raw.connection.close()
    }

    @Test func aLostEpochCounterIsRepairedSoNothingClearedComesBackAndRemoveAllStillWorks() async throws {
        // Given an instance that has cleared three times and holds an entry sealed under the last epoch
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let cache = try RedisCache<String, Data>(configuration: try RedisTier.configuration(port: server.port))
        let epochKey = "strata:v2:\(cache.configuration.namespace):{\(cache.configuration.namespace)}:epoch"
        for _ in 0..<3 { try await cache.removeAll() }
        try await cache.setValue(Data("three".utf8), forKey: "k", expiry: .never)
        let sealedUnder = try #require(try await Self.counter(raw, epochKey))

        // When the counter alone is lost (as allkeys-lru may evict it), the entry is a miss: a missing counter
        // matches no epoch, and a read does not create it
        _ = try await raw.send("DEL", epochKey)
        #expect(try await cache.value(forKey: "k") == nil)
        #expect(try await raw.send("GET", epochKey) == .null)

        // And the next write creates it again above every epoch this instance saw
        try await cache.setValue(Data("four".utf8), forKey: "k4", expiry: .never)
        let recreated = try #require(try await Self.counter(raw, epochKey))
        #expect(recreated > sealedUnder)
        #expect(try await cache.value(forKey: "k4") == Data("four".utf8))
        #expect(try await cache.value(forKey: "k") == nil)

        // When the whole database goes (FLUSHDB) and the instance, having read since, writes again
        _ = try await raw.send("FLUSHDB")
        #expect(try await cache.value(forKey: "k") == nil)
        try await cache.setValue(Data("after".utf8), forKey: "k", expiry: .never)
        #expect(try await cache.value(forKey: "k") == Data("after".utf8))

        // Then removeAll still clears this instance's own writes, here and in a fresh instance
        try await cache.removeAll()
        #expect(try await cache.value(forKey: "k") == nil)
        let fresh = try RedisCache<String, Data>(configuration: cache.configuration)
        #expect(try await fresh.value(forKey: "k") == nil)
    }

    /// The number a counter key holds, or `nil` when it is missing.
    static func counter(_ raw: RawRedis, _ key: String) async throws -> UInt64? {
        guard case .bulkString(let bytes) = try await raw.send("GET", key) else { return nil }
        return UInt64(String(decoding: bytes, as: UTF8.self))
    }

    @Test func removeAllIsOneIncrAndMakesEveryEntryAMiss() async throws {
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let cache = try RedisCache<Int, Data>(configuration: try RedisTier.configuration(port: server.port))
        let count = StressScale.scaled(100_000)
        let value = Data(repeating: 1, count: 16)
        try await forEachConcurrently(0..<count) { try await cache.setValue(value, forKey: $0, expiry: .never) }
        #expect(try await cache.value(forKey: count - 1) == value)
        // When removeAll runs
        let evalBefore = try await raw.calls(of: "eval")
        let incrBefore = try await raw.calls(of: "incr")
        try await cache.removeAll()
        // Then the server ran one command for it, an EVAL of the counter script, which ran one INCR
        #expect(try await raw.calls(of: "eval") - evalBefore == 1)
        #expect(try await raw.calls(of: "incr") - incrBefore == 1)
        #expect(try await raw.calls(of: "scan") == 0)
        // And every entry is a miss, here and in another process's instance
        let other = try RedisCache<Int, Data>(configuration: cache.configuration)
        let hits = Locked(0)
        try await forEachConcurrently(0..<count) { key in
            if try await other.value(forKey: key) != nil { hits.withLock { $0 += 1 } }
        }
        #expect(hits.value == 0)
        #expect(other.health.staleEpochEntries == count)
        // And the tier keeps working
        try await cache.setValue(value, forKey: 1, expiry: .never)
        #expect(try await other.value(forKey: 1) == value)
        await cache.close()
        await other.close()
        await raw.connection.close()
    }

    @Test func redisSeesNoPlaintextKeyOrValue() async throws {
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let configuration = try RedisTier.configuration(port: server.port, namespace: "plain")
        let cache = try RedisCache<String, Data>(configuration: configuration)
        let markers = (0..<50).map { "MARKER-key-\($0)-e4b1" }
        for (index, marker) in markers.enumerated() {
            try await cache.setValue(Data("SECRET-value-\(index)-9f3c".utf8), forKey: marker, expiry: .hours(1))
        }
        try await cache.removeAll()
        let keys = try await raw.allKeys()
        #expect(keys.count == 52)  // 50 entries, the epoch counter, the key-check record
        for key in keys {
            let name = String(decoding: key, as: UTF8.self)
            #expect(name.hasPrefix("strata:v2:plain:"))
            if name.hasPrefix("strata:v2:plain:k:{") {
                // 128 bits in base64url without padding, in a cluster hash tag
                #expect(name.hasSuffix("}"))
                let hashed = name.dropFirst("strata:v2:plain:k:{".count).dropLast()
                #expect(hashed.count == 22)
                #expect(hashed.allSatisfy { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
            }
            let stored = try await raw.get(key) ?? []
            for needle in ["MARKER", "SECRET", "key-", "value-", "e4b1", "9f3c"] {
                #expect(!key.contains(bytes: Array(needle.utf8)))
                #expect(!stored.contains(bytes: Array(needle.utf8)))
            }
        }
        await cache.close()
        await raw.connection.close()
    }

    @Test func aWrongMasterKeyIsToldApartAndDeletesNothing() async throws {
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let owner = try RedisCache<String, Data>(
            configuration: try RedisTier.configuration(port: server.port, namespace: "shared"))
        try await owner.setValue(Data("v".utf8), forKey: "k", expiry: .never)
        let keysBefore = try await raw.allKeys().count
        let epochBefore = try await raw.send("GET", "strata:v2:shared:{shared}:epoch")
        let stranger = try RedisCache<String, Data>(
            configuration: try RedisTier.configuration(port: server.port, namespace: "shared"))
        // Every operation of the other key's holder fails with wrongMasterKey
        for operation in [
            { _ = try await stranger.entry(forKey: "k") }, { try await stranger.removeAll() },
            { try await stranger.removeEntry(forKey: "k") },
            { try await stranger.setValue(Data("w".utf8), forKey: "k", expiry: .never) },
        ] as [@Sendable () async throws -> Void] {
            let error = await #expect(throws: CacheError.self) { try await operation() }
            #expect(error?.code == .wrongMasterKey)
        }
        // And nothing was deleted or advanced: the owner still reads its entry
        #expect(try await raw.allKeys().count == keysBefore)
        #expect(try await raw.send("GET", "strata:v2:shared:{shared}:epoch") == epochBefore)
        #expect(try await owner.value(forKey: "k") == Data("v".utf8))
        #expect(owner.health.corruptEntries == 0)
        await owner.close()
        await stranger.close()
        await raw.connection.close()
    }

    @Test func tamperedCopiedAndReplayedValuesAreCountedMisses() async throws {
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let events = Locked<[CacheEvent.Kind]>([])
        let configuration = try RedisTier.configuration(
            port: server.port, namespace: "tamper", observer: { event in events.withLock { $0.append(event.kind) } })
        let cache = try RedisCache<String, Data>(configuration: configuration)
        try await cache.setValue(Data("alpha".utf8), forKey: "a", expiry: .never)
        try await cache.setValue(Data("bravo".utf8), forKey: "b", expiry: .never)
        let names = try await raw.allKeys().filter { $0.contains(bytes: Array(":k:".utf8)) }
        #expect(names.count == 2)
        let name = { (key: String) async throws -> [UInt8] in
            for name in names where try await cache.value(forKey: key) != nil {
                // Find which name holds `key` by hiding each in turn.
                let saved = try await raw.get(name) ?? []
                _ = try await raw.send([Array("DEL".utf8), name])
                let gone = try await cache.value(forKey: key) == nil
                _ = try await raw.send([Array("SET".utf8), name, saved])
                if gone { return name }
            }
            return []
        }
        let nameA = try await name("a")
        let nameB = try await name("b")
        let sealedA = try #require(try await raw.get(nameA))
        let corruptBefore = cache.health.corruptEntries

        // A flipped byte in the ciphertext
        var flipped = sealedA
        flipped[flipped.count - 20] ^= 0x01
        _ = try await raw.send([Array("SET".utf8), nameA, flipped])
        #expect(try await cache.value(forKey: "a") == nil)
        // A's value copied under B's name
        _ = try await raw.send([Array("SET".utf8), nameB, sealedA])
        #expect(try await cache.value(forKey: "b") == nil)
        // A's value with its header's cost changed
        var recosted = sealedA
        recosted[25] ^= 0x01
        _ = try await raw.send([Array("SET".utf8), nameA, recosted])
        #expect(try await cache.value(forKey: "a") == nil)
        #expect(cache.health.corruptEntries - corruptBefore == 3)
        #expect(events.value.filter { $0 == .corruptEntryKept }.count == 3)
        // Nothing it could not open was deleted
        #expect(try await raw.get(nameA) == recosted)

        // An old-epoch value replayed after removeAll is a miss; with its epoch rewritten it does not open
        _ = try await raw.send([Array("SET".utf8), nameA, sealedA])
        #expect(try await cache.value(forKey: "a") == Data("alpha".utf8))
        try await cache.removeAll()
        _ = try await raw.send([Array("SET".utf8), nameA, sealedA])
        #expect(try await cache.value(forKey: "a") == nil)
        #expect(cache.health.staleEpochEntries == 1)
        // The header's epoch (bytes 2..<10, big-endian) rewritten to the current one: epochs start at a
        // random base, so flipping a bit could as well make it an older epoch (a stale miss, not a failure
        // to open)
        let epochBytes = try #require(try await raw.get(Array("strata:v2:tamper:{tamper}:epoch".utf8)))
        let currentEpoch = try #require(UInt64(String(decoding: epochBytes, as: UTF8.self)))
        var reEpoched = sealedA
        reEpoched.replaceSubrange(2..<10, with: withUnsafeBytes(of: currentEpoch.bigEndian) { Array($0) })
        #expect(reEpoched != sealedA)
        _ = try await raw.send([Array("SET".utf8), nameA, reEpoched])
        #expect(try await cache.value(forKey: "a") == nil)
        #expect(cache.health.corruptEntries - corruptBefore == 4)
        await cache.close()
        await raw.connection.close()
    }

    @Test func aStoppedServerIsUnavailableAndAPausedOneMissesItsDeadline() async throws {
        // Given a tier with a 200 ms read deadline over a live server
        let server = try RedisServer()
        var configuration = try RedisTier.configuration(port: server.port)
        configuration.readTimeout = .milliseconds(200)
        let cache = try RedisCache<String, Data>(configuration: configuration)
        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .never)

        // When the server is paused, then a read fails with deadlineExceeded, the transport's error as cause
        server.signal(SIGSTOP)
        let late = await #expect(throws: CacheError.self) { _ = try await cache.value(forKey: "k") }
        #expect(late?.code == .deadlineExceeded)
        #expect(late?.cause is RedisError)
        server.signal(SIGCONT)

        // When it is gone, then calls fail as unavailable (refused, or the breaker open), not as a bare .io
        server.kill9()
        let gone = await #expect(throws: CacheError.self) { _ = try await cache.value(forKey: "k") }
        #expect(gone?.code == .unavailable)
        await cache.close()
    }

    @Test func aFullServerFailsTheWriteAsOutOfSpace() async throws {
        let server = try RedisServer(extraArguments: ["--maxmemory-policy", "noeviction"])
        let cache = try RedisCache<Int, Data>(configuration: try RedisTier.configuration(port: server.port))
        let value = Data(repeating: 7, count: 600 << 10)
        try await cache.setValue(Data("small".utf8), forKey: -1, expiry: .never)
        // The limit is 1 MiB above what the server uses once this client is connected: an empty Redis 7.0
        // already uses about 900 KB, so a fixed `--maxmemory 1mb` left too little room for the connections.
        let info = try await RedisCLI.run(port: server.port, ["INFO", "memory"])
        let usedLine = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("used_memory:") }
        let used = try #require(usedLine.flatMap { Int($0.dropFirst("used_memory:".count)) })
        let limit = String(used + (1 << 20))
        #expect(try await RedisCLI.run(port: server.port, ["CONFIG", "SET", "maxmemory", limit]) == "OK")
        var failure: CacheError?
        for key in 0..<8 {
            do {
                try await cache.setValue(value, forKey: key, expiry: .never)
            } catch let error as CacheError {
                failure = error
                break
            }
        }
        #expect(failure?.code == .outOfSpace)
        #expect((failure?.cause as? RedisError)?.code == .outOfMemory)
        // And reads still work
        #expect(try await cache.value(forKey: -1) == Data("small".utf8))
        await cache.close()
    }

    @Test func theACLInTheDocsIsEnough() async throws {
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        // The ACL of Docs/RedisCache.md, "Running Redis for it"
        let rule =
            "on >secret ~strata:v2:* resetchannels -@all +hello +auth +client|setname +client|tracking +ping +get "
            + "+mget +set +unlink +incr +incrby +eval +role +wait +scan +getrange"
        let words = ["ACL", "SETUSER", "strata"] + rule.split(separator: " ").map(String.init)
        #expect(try await raw.send(words.map { Array($0.utf8) }) == .simpleString("OK"))
        var configuration = try RedisTier.configuration(port: server.port)
        configuration.username = "strata"
        configuration.password = "secret"
        // Keep-alive PINGs on both connections within the test
        configuration.keepAliveInterval = .milliseconds(50)
        let cache = try RedisCache<String, Data>(configuration: configuration)
        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .hours(1))
        #expect(try await cache.value(forKey: "k") == Data("v".utf8))
        try await cache.removeEntry(forKey: "k")
        try await cache.setEntry(CacheEntry(value: Data(), expiresAt: Date(timeIntervalSince1970: 0)), forKey: "k")
        try await cache.removeAll()
        #expect(try await cache.value(forKey: "k") == nil)
        // And tags: a tagged write (its versions read with MGET) and a tag removal (INCR)
        try await cache.setEntry(CacheEntry(value: Data("t".utf8), tags: ["account-1"]), forKey: "tagged")
        #expect(try await cache.value(forKey: "tagged") == Data("t".utf8))
        try await cache.removeAll(taggedWith: "account-1")
        #expect(try await cache.value(forKey: "tagged") == nil)
        // And a lost epoch counter is created again (EVAL) by the next write rather than failing every later read
        try await cache.setValue(Data("old".utf8), forKey: "old", expiry: .hours(1))
        _ = try await raw.send("DEL", "strata:v2:\(configuration.namespace):{\(configuration.namespace)}:epoch")
        #expect(try await cache.value(forKey: "k") == nil)
        try await cache.setValue(Data("again".utf8), forKey: "k", expiry: .hours(1))
        #expect(try await cache.value(forKey: "k") == Data("again".utf8))
        // And the purge of old epochs (SCAN, GETRANGE, UNLINK) removes the entry sealed before the loss (this
        // instance keeps its epochs above every one it saw, so the old one is older)
        #expect(try await cache.purgeOldEpochs() == 1)
        #expect(try await cache.value(forKey: "old") == nil)
        #expect(try await cache.value(forKey: "k") == Data("again".utf8))
        // And bulk reads (MGET) and stale-including reads
        try await cache.setValue(Data("b".utf8), forKey: "b", expiry: .hours(1))
        #expect(
            try await cache.values(forKeys: ["k", "b", "absent"]) == ["k": Data("again".utf8), "b": Data("b".utf8)])
        #expect(try await cache.entryIncludingStale(forKey: "b")?.value == Data("b".utf8))
        // And the tracking connection may turn tracking on, and receives another client's write
        let published = Locked(0)
        let subscription = cache.addInvalidationObserver { _ in published.withLock { $0 += 1 } }
        let tracking = await RedisTesting.wait(timeout: .seconds(60)) { cache.health.isTracking }
        #expect(tracking != nil)
        let entryNames = try await raw.allKeys().filter { $0.contains(bytes: Array(":k:".utf8)) }
        _ = try await raw.send([Array("UNLINK".utf8)] + entryNames)
        #expect(await RedisTesting.wait(timeout: .seconds(60)) { published.value > 0 } != nil)
        // And keep-alive PINGs were answered on the data and the tracking connection (two or more calls)
        #expect(await RedisTesting.waitAsync(timeout: .seconds(10)) { (try? await raw.calls(of: "ping")) ?? 0 >= 2 })
        // Then the server denied the user nothing on any of these paths, and no connection was lost
        #expect(try await raw.send("ACL", "LOG") == .array([]))
        #expect(cache.health.trackingLosses == 0)
        #expect(cache.health.reconnects == 0)
        subscription.cancel()
        await cache.close()
        await raw.connection.close()
    }

    @Test func valuesOverTheMaximumAreRefused() async throws {
        let server = try RedisServer()
        var configuration = try RedisTier.configuration(port: server.port)
        configuration.maximumValueSize = 1000
        let cache = try RedisCache<String, Data>(configuration: configuration)
        try await cache.setValue(Data(count: 1000), forKey: "fits", expiry: .never)
        let error = await #expect(throws: CacheError.self) {
            try await cache.setValue(Data(count: 1001), forKey: "big", expiry: .never)
        }
        #expect(error?.code == .entryTooLarge)
        #expect(try await cache.value(forKey: "fits") == Data(count: 1000))
        await cache.close()
    }
}

/// Runs `body` for every element, at most 256 at a time.
func forEachConcurrently<S: Sequence & Sendable>(
    _ elements: S, _ body: @escaping @Sendable (S.Element) async throws -> Void
) async throws where S.Element: Sendable {
    try await withThrowingTaskGroup(of: Void.self) { group in
        var running = 0
        for element in elements {
            if running == 256 {
                try await group.next()
                running -= 1
            }
            group.addTask { try await body(element) }
            running += 1
        }
        try await group.waitForAll()
    }
}

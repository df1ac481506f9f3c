import CacheCore
import Foundation
import MemoryCache
import MultiCache
import StrataTestSupport
import Testing

@testable import RedisCache

/// Server-driven coherence: writes made by another cache, by a plain client, `FLUSHDB` and `removeAll()`
/// elsewhere reach this process's memory tier through the Redis tier's tracking connection; a lost
/// tracking connection flushes it; a reply read before an invalidation is never written back after it.
// Serialized: each test starts servers, proxies and tracking threads; one at a time keeps the suite from
// starving the rest of the run on two cores.
@Suite(.serialized, .enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisInvalidationTests {
    /// Two stacks on one namespace, both tracking.
    static func pair(_ server: RedisServer) async throws -> (InvalidationStack, InvalidationStack) {
        let namespace = RedisTier.namespace()
        let masterKey = RedisTier.randomMasterKey()
        let first = try InvalidationStack(port: server.port, namespace: namespace, masterKey: masterKey)
        let second = try InvalidationStack(port: server.port, namespace: namespace, masterKey: masterKey)
        #expect(await first.waitUntilTracking())
        #expect(await second.waitUntilTracking())
        return (first, second)
    }

    @Test func aWriteByAnotherCacheStopsThisOneServingTheOldValue() async throws {
        let server = try RedisServer()
        let (writer, reader) = try await Self.pair(server)
        try await writer.multi.setValue("old", forKey: "k")
        #expect(await reader.settle())
        #expect(try await reader.multi.value(forKey: "k") == "old")
        #expect(reader.memory.value(forKey: "k") == "old")

        try await writer.multi.setValue("new", forKey: "k")
        #expect(await reader.log.waitForKey("k"))
        #expect(reader.memory.value(forKey: "k") == nil)
        #expect(try await reader.multi.value(forKey: "k") == "new")
        #expect(reader.redis.health.keysInvalidated >= 1)

        // A removal does too
        #expect(reader.memory.value(forKey: "k") == "new")
        try await writer.multi.removeEntry(forKey: "k")
        #expect(await reader.log.waitForKey("k"))
        #expect(reader.memory.value(forKey: "k") == nil)
        #expect(try await reader.multi.value(forKey: "k") == nil)
    }

    @Test func aWriteWithAPlainClientStopsTheOldValueBeingServed() async throws {
        let server = try RedisServer()
        let (_, reader) = try await Self.pair(server)
        try await reader.multi.setValue("old", forKey: "k")
        let name = try reader.redis.entryName("k".canonicalBytes)
        #expect(await reader.log.waitForKey("k"))  // its own write comes back
        #expect(try await reader.multi.value(forKey: "k") == "old")
        #expect(reader.memory.value(forKey: "k") == "old")

        // As `redis-cli SET <name> garbage` would
        let raw = try RawRedis(port: server.port)
        _ = try await raw.send([Array("SET".utf8), name, Array("garbage".utf8)])
        #expect(await reader.log.waitForKey("k"))
        #expect(reader.memory.value(forKey: "k") == nil)
        #expect(try await reader.multi.value(forKey: "k") == nil)  // what the client wrote does not open
        #expect(reader.redis.health.corruptEntries == 1)
    }

    @Test func flushDBAndRemoveAllElsewhereFlushTheTiersAbove() async throws {
        let server = try RedisServer()
        let (writer, reader) = try await Self.pair(server)
        for key in ["a", "b", "c"] { try await writer.multi.setValue(key, forKey: key) }
        #expect(await reader.settle())
        for key in ["a", "b", "c"] { #expect(try await reader.multi.value(forKey: key) == key) }
        #expect(reader.memory.count == 3)

        let raw = try RawRedis(port: server.port)
        _ = try await raw.send("FLUSHDB")
        #expect(await reader.log.waitForAll())
        #expect(reader.memory.count == 0)
        #expect(try await reader.multi.value(forKey: "a") == nil)

        try await writer.multi.setValue("again", forKey: "a")
        #expect(try await reader.multi.value(forKey: "a") == "again")
        try await writer.redis.removeAll()  // the epoch INCR
        #expect(await reader.log.waitForAll())
        #expect(reader.memory.value(forKey: "a") == nil)
        #expect(try await reader.multi.value(forKey: "a") == nil)
    }

    @Test func aFillElsewhereRemovesNothingFromACacheThatDoesNotHoldTheKey() async throws {
        let server = try RedisServer()
        let (filler, holder) = try await Self.pair(server)
        try await filler.multi.setValue("held", forKey: "held")
        try await filler.multi.setValue("s0", forKey: "sentinel")
        #expect(await holder.settle())
        #expect(try await holder.multi.value(forKey: "held") == "held")
        #expect(try await holder.multi.value(forKey: "sentinel") == "s0")
        let before = holder.redis.health

        // A load-once fill of keys the holder never used: SETs the holder's tracking hears and ignores
        for index in 0..<50 {
            _ = try await filler.multi.value(forKey: "filled-\(index)") { "v\(index)" }
        }
        // Pushes arrive in order: once the sentinel's is applied, the fills' were seen
        try await filler.multi.setValue("s1", forKey: "sentinel")
        #expect(await holder.log.waitForKey("sentinel"))
        let after = holder.redis.health
        #expect(after.fullInvalidations == before.fullInvalidations)
        #expect(after.keysInvalidated == before.keysInvalidated + 1)
        #expect(holder.memory.value(forKey: "held") == "held")
        #expect(holder.memory.count == 1)
    }

    @Test func aCutTrackingConnectionFlushesTheTierAboveAndTheOldValueIsNeverServedAfterReconnect() async throws {
        let server = try RedisServer()
        let proxy = try FaultProxy(upstreamPort: server.port)
        defer { proxy.stop() }
        let namespace = RedisTier.namespace()
        let masterKey = RedisTier.randomMasterKey()
        let reader = try InvalidationStack(
            port: server.port, namespace: namespace, masterKey: masterKey, trackingPort: proxy.port)
        let writer = try InvalidationStack(port: server.port, namespace: namespace, masterKey: masterKey)
        #expect(await reader.waitUntilTracking())
        #expect(await writer.waitUntilTracking())
        try await writer.multi.setValue("old", forKey: "k")
        #expect(await reader.settle())
        #expect(try await reader.multi.value(forKey: "k") == "old")
        #expect(reader.memory.value(forKey: "k") == "old")
        #expect(reader.redis.health.isTracking)

        // The next bytes to the reader's tracking connection (the push of this write) cut it: the push is
        // lost, and the loss itself flushes the memory tier
        proxy.mode = .cut(afterServerBytes: 0)
        try await writer.multi.setValue("new", forKey: "k")
        #expect(await reader.published.waitForAll())  // the loss
        #expect(await reader.log.waitForAll())
        #expect(reader.memory.value(forKey: "k") == nil)
        #expect(reader.redis.health.trackingLosses == 1)

        // Reconnected (tracking on, flushed again, then healthy), and the old value is served 0 times
        #expect(await reader.published.waitForAll())
        let healthy = await RedisTesting.wait(timeout: .seconds(10)) { reader.redis.health.isTracking }
        #expect(healthy != nil)
        #expect(reader.redis.health.trackingConnects == 2)
        var served: [String: Int] = [:]
        for _ in 0..<100 { served[try await reader.multi.value(forKey: "k") ?? "nil", default: 0] += 1 }
        #expect(served == ["new": 100])
        // And tracking works on the new connection
        try await writer.multi.setValue("newer", forKey: "k")
        #expect(await reader.log.waitForKey("k"))
        #expect(try await reader.multi.value(forKey: "k") == "newer")
    }

    @Test func aSilentTrackingPeerIsNoticedByTheKeepAliveAndFlushesTheTierAbove() async throws {
        let server = try RedisServer()
        let proxy = try FaultProxy(upstreamPort: server.port)
        defer { proxy.stop() }
        let reader = try InvalidationStack(
            port: server.port, namespace: RedisTier.namespace(), masterKey: RedisTier.randomMasterKey(),
            trackingPort: proxy.port
        ) { configuration in
            configuration.keepAliveInterval = .milliseconds(100)
            configuration.readTimeout = .milliseconds(500)
        }
        #expect(await reader.waitUntilTracking())
        try await reader.multi.setValue("v", forKey: "k")
        #expect(await reader.log.waitForKey("k"))  // its own write
        #expect(try await reader.multi.value(forKey: "k") == "v")
        #expect(reader.memory.value(forKey: "k") == "v")

        // The peer goes silent without closing: the keep-alive PING gets no answer
        let silentAt = ContinuousClock.now
        proxy.mode = .blackhole
        #expect(await reader.published.waitForAll())
        let noticed = ContinuousClock.now - silentAt
        #expect(await reader.log.waitForAll())
        #expect(reader.memory.value(forKey: "k") == nil)
        #expect(reader.redis.health.trackingLosses == 1)
        print(
            "redis invalidation: a silent tracking peer was noticed after \(noticed) (keep-alive 100 ms + deadline 500 ms)"
        )

        proxy.mode = .pass
        #expect(await reader.published.waitForAll())
        let healthy = await RedisTesting.wait(timeout: .seconds(10)) { reader.redis.health.isTracking }
        #expect(healthy != nil)
    }

    @Test func aReplyDelayedPastAnInvalidationOfItsKeyIsNeverWrittenBack() async throws {
        let server = try RedisServer()
        // The reader's data connection goes through the proxy, which holds each reply 0–3 ms; its
        // tracking connection does not
        let proxy = try FaultProxy(upstreamPort: server.port)
        defer { proxy.stop() }
        let namespace = RedisTier.namespace()
        let masterKey = RedisTier.randomMasterKey()
        let reader = try InvalidationStack(
            port: proxy.port, namespace: namespace, masterKey: masterKey, trackingPort: server.port)
        var writerConfiguration = try RedisTier.configuration(
            port: server.port, namespace: namespace, masterKey: masterKey)
        writerConfiguration.tracksInvalidations = false
        let writer = try RedisCache<String, String>(configuration: writerConfiguration)
        #expect(await reader.waitUntilTracking())
        try await writer.setValue("s", forKey: "sentinel")
        #expect(await reader.settle())
        #expect(try await reader.multi.value(forKey: "sentinel") == "s")

        var random = SplitMix64(seed: 16)
        var raced = 0
        for round in 0..<StressScale.scaled(60) {
            let key = "k\(round)"
            try await writer.setValue("old", forKey: key)
            proxy.mode = .delay(.microseconds(Int64(random.next() % 3_000)))
            let yields = Int(random.next() % 64)
            async let read = reader.multi.value(forKey: key)
            async let write: Void = Self.write("new", forKey: key, to: writer, afterYields: yields)
            let seen = try await read
            try await write
            proxy.mode = .pass
            if seen == "old" { raced += 1 }
            // Every push before the sentinel's has been applied once the sentinel's is
            try await writer.setValue("s\(round)", forKey: "sentinel")
            #expect(await reader.log.waitForKey("sentinel"))
            #expect(reader.memory.value(forKey: key) != "old", "round \(round)")
            #expect(try await reader.multi.value(forKey: key) == "new", "round \(round)")
        }
        print("redis invalidation: \(raced) reads returned the old value while racing its invalidation")
    }

    /// Writes after `yields` turns of the scheduler: a random point in the racing read.
    static func write(
        _ value: String, forKey key: String, to cache: RedisCache<String, String>, afterYields yields: Int
    )
        async throws
    {
        for _ in 0..<yields { await Task.yield() }
        try await cache.setValue(value, forKey: key)
    }

    @Test func aLoneTierOpensNoTrackingConnectionAndAReleasedMultiCacheUnsubscribes() async throws {
        let server = try RedisServer()
        let redis = try RedisCache<String, String>(configuration: try RedisTier.configuration(port: server.port))
        try await redis.setValue("v", forKey: "k")
        #expect(redis.health.trackingConnects == 0)
        #expect(!redis.health.isTracking)

        weak var released: MultiCache<String, String>?
        do {
            let memory = try MemoryCache<String, String>(countLimit: 10)
            let multi = try MultiCache<String, String>([memory, redis])
            released = multi
            let healthy = await RedisTesting.wait(timeout: .seconds(10)) { redis.health.isTracking }
            #expect(healthy != nil)
        }
        // No cycle between the MultiCache and the tier's observer list: released (once a removal still
        // running on its task, which holds it, has ended), and tracking stops
        let gone = await RedisTesting.wait(timeout: .seconds(10)) { released == nil }
        #expect(gone != nil)
        #expect(!redis.health.isTracking)
        #expect(redis.invalidations.snapshot.isTracking == false)
        await redis.close()
        #expect(Descriptors.sockets(toPort: server.port) == 0)
    }

    @Test func anUnknownNameAfterTheNameMapDroppedNamesFlushesEverythingOnce() async throws {
        let server = try RedisServer()
        let namespace = RedisTier.namespace()
        let masterKey = RedisTier.randomMasterKey()
        let reader = try InvalidationStack(port: server.port, namespace: namespace, masterKey: masterKey) {
            $0.trackedKeyLimit = 8
        }
        var writerConfiguration = try RedisTier.configuration(
            port: server.port, namespace: namespace, masterKey: masterKey)
        writerConfiguration.tracksInvalidations = false
        let writer = try RedisCache<String, String>(configuration: writerConfiguration)
        #expect(await reader.waitUntilTracking())
        let keys = ["a", "b", "c", "d", "e", "f", "g"]
        // Written before the reader names them: writes of names it never used are ignored
        for key in keys { try await writer.setValue(key, forKey: key) }
        // Pushes arrive in order: once the reader's own write of "sync" is applied, those were handled
        try await reader.multi.setValue("s", forKey: "sync")
        #expect(await reader.log.waitForKey("sync"))
        // Two generations of 4: the marker, "sync", a and b are dropped when f is named
        for key in keys { #expect(try await reader.multi.value(forKey: key) == key) }
        #expect(reader.memory.count == 7)
        let before = reader.redis.health.fullInvalidations

        // "a" was dropped from the 8-name map while its copy is still above: its change flushes everything
        try await writer.setValue("a2", forKey: "a")
        #expect(await reader.log.waitForAll())
        #expect(reader.redis.health.fullInvalidations == before + 1)
        #expect(reader.memory.count == 0)
        #expect(try await reader.multi.value(forKey: "a") == "a2")

        // After that flush, a name never used is ignored again; a known one is published as a key
        try await writer.setValue("x", forKey: "never-read")
        try await writer.setValue("a3", forKey: "a")
        #expect(await reader.log.waitForKey("a"))
        #expect(reader.redis.health.fullInvalidations == before + 1)
    }

    @Test func aCacheJoiningATierThatAlreadyTracksStartsFromAFlush() async throws {
        let server = try RedisServer()
        let redis = try RedisCache<String, String>(configuration: try RedisTier.configuration(port: server.port))
        let first = try MultiCache<String, String>([try MemoryCache<String, String>(), redis])
        let tracking = await RedisTesting.wait(timeout: .seconds(10)) { redis.health.isTracking }
        #expect(tracking != nil)

        // A memory tier filled before its MultiCache existed: its keys were never named to the tier
        let memory = try MemoryCache<String, String>()
        try memory.setValue("stale", forKey: "k")
        let second = try MultiCache<String, String>([memory, redis])
        let flushed = await RedisTesting.wait(timeout: .seconds(10)) { memory.count == 0 }
        #expect(flushed != nil)
        #expect(try await second.value(forKey: "k") == nil)
        _ = first
    }

    @Test func theNameMapKeepsItsBoundAndReportsDrops() {
        var names = TrackedNames<Int>(limit: 4)
        names.insert([1], for: 1)
        names.insert([2], for: 2)  // the current generation is full: it becomes the previous one
        #expect(names.key(for: [1]) == 1)  // moved back to the current generation
        names.insert([3], for: 3)  // rotates again: [2] is dropped
        #expect(names.count <= 4)
        #expect(names.key(for: [2]) == nil)
        #expect(names.hasDropped)
        names.forgetDrops()
        #expect(!names.hasDropped)
        for index in 10..<1_000 { names.insert([UInt8(index % 256), UInt8(index / 256)], for: index) }
        #expect(names.count <= 4)
    }
}

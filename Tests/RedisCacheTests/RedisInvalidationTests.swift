import CacheCore
import Foundation
import MemoryCache
import MultiCache
import StrataTestSupport
import Testing

@testable import RedisCache

/// Server-driven coherence within one process: writes and bulk reads by another cache, fills that must
/// not invalidate, a silent tracking peer, the name map's bound, and how a `MultiCache` subscribes and
/// unsubscribes. The coherence cases with a second process (a write by another process, by
/// `redis-cli`, `FLUSHDB`, a cut tracking connection, a delayed reply racing an invalidation) are in
/// ``RedisInvalidationProcessTests``.
// Serialized: each test starts servers, proxies and tracking threads; one at a time keeps the suite from
// starving the rest of the run on two cores.
@Suite(.serialized, .enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisInvalidationTests {
    /// Two stacks on one namespace, both tracking, over `endpoint`'s transport.
    static func pair(_ endpoint: RedisEndpoint) async throws -> (InvalidationStack, InvalidationStack) {
        let namespace = RedisTier.namespace()
        let masterKey = RedisTier.randomMasterKey()
        let first = try InvalidationStack(endpoint: endpoint, namespace: namespace, masterKey: masterKey)
        let second = try InvalidationStack(endpoint: endpoint, namespace: namespace, masterKey: masterKey)
        #expect(await first.waitUntilTracking())
        #expect(await second.waitUntilTracking())
        return (first, second)
    }

    @Test(arguments: RedisEndpoint.Kind.allCases)
    func aWriteByAnotherCacheStopsThisOneServingTheOldValue(over kind: RedisEndpoint.Kind) async throws {
        let endpoint = try RedisEndpoint(kind)
        let (writer, reader) = try await Self.pair(endpoint)
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

    @Test(arguments: RedisEndpoint.Kind.allCases)
    func aBulkReadWrittenBackIsInvalidatedByAWriteElsewhere(over kind: RedisEndpoint.Kind) async throws {
        // Given a value the reader got through a bulk read (one MGET) and wrote back into its memory tier
        let endpoint = try RedisEndpoint(kind)
        let (writer, reader) = try await Self.pair(endpoint)
        try await writer.multi.setValue("old", forKey: "k")
        #expect(await reader.settle())
        #expect(try await reader.multi.values(forKeys: ["k"]) == ["k": "old"])
        #expect(reader.memory.value(forKey: "k") == "old")

        // When another cache writes the key
        try await writer.multi.setValue("new", forKey: "k")

        // Then the reader's copy above Redis goes (the bulk read registered the key's name)
        #expect(await reader.log.waitForKey("k"))
        #expect(reader.memory.value(forKey: "k") == nil)
        #expect(try await reader.multi.value(forKey: "k") == "new")
    }

    @Test(arguments: RedisEndpoint.Kind.allCases)
    func aFillElsewhereRemovesNothingFromACacheThatDoesNotHoldTheKey(over kind: RedisEndpoint.Kind) async throws {
        let endpoint = try RedisEndpoint(kind)
        let (filler, holder) = try await Self.pair(endpoint)
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
        // The last subscriber's release stops tracking on the tier's own task: waited for, not assumed done
        // (under ThreadSanitizer beside other suites it was still running when the release was seen).
        let stopped = await RedisTesting.wait(timeout: .seconds(10)) {
            !redis.health.isTracking && redis.invalidations.snapshot.isTracking == false
        }
        #expect(stopped != nil)
        let clients = try await Descriptors.clientPorts(of: server.port)
        #expect(!clients.isEmpty)
        await redis.close()
        #expect(Descriptors.sockets(toPort: server.port, fromLocalPorts: clients) == 0)
    }

    @Test(arguments: RedisEndpoint.Kind.allCases)
    func anUnknownNameAfterTheNameMapDroppedNamesFlushesEverythingOnce(over kind: RedisEndpoint.Kind) async throws {
        let endpoint = try RedisEndpoint(kind)
        let namespace = RedisTier.namespace()
        let masterKey = RedisTier.randomMasterKey()
        let reader = try InvalidationStack(endpoint: endpoint, namespace: namespace, masterKey: masterKey) {
            $0.trackedKeyLimit = 8
        }
        var writerConfiguration = try RedisTier.configuration(
            endpoint: endpoint, namespace: namespace, masterKey: masterKey)
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

    @Test(arguments: RedisEndpoint.Kind.allCases)
    func aCacheJoiningATierThatAlreadyTracksStartsFromAFlush(over kind: RedisEndpoint.Kind) async throws {
        let endpoint = try RedisEndpoint(kind)
        let redis = try RedisCache<String, String>(configuration: try RedisTier.configuration(endpoint: endpoint))
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

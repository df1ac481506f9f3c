import CacheTesting
import Foundation
import Testing

@testable import RedisCache
@testable import RedisConnection

/// Checks of the tier that another check backs up, each asserted by its own reason on a real server: a
/// test here fails when that one layer is removed, even where the outcome (a miss, an error) would stay.
/// The envelope's own layers are in ``EnvelopeTests``.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisLayeredCheckTests {
    /// The entry names (`…:k:…`) of `namespace` on the server.
    static func entryNames(_ raw: RawRedis, namespace: String) async throws -> [[UInt8]] {
        try await raw.allKeys().filter { $0.starts(with: Array("strata:v2:\(namespace):k:{".utf8)) }
    }

    @Test func removeAllInOneNamespaceLeavesAnotherNamespacesEntriesReadable() async throws {
        // Given two namespaces on one server under one master key, each holding an entry for the same key
        let server = try RedisServer()
        let masterKey = RedisTier.randomMasterKey()
        let alpha = try RedisCache<String, Data>(
            configuration: try RedisTier.configuration(port: server.port, namespace: "alpha", masterKey: masterKey))
        let bravo = try RedisCache<String, Data>(
            configuration: try RedisTier.configuration(port: server.port, namespace: "bravo", masterKey: masterKey))
        try await alpha.setValue(Data("a".utf8), forKey: "k", expiry: .never)
        try await bravo.setValue(Data("b".utf8), forKey: "k", expiry: .never)

        // When one of them is cleared
        try await alpha.removeAll()

        // Then its entry is a miss of an older epoch, and the other namespace still reads its entry, in this
        // instance and in a fresh one (which has seen no epoch before)
        #expect(try await alpha.value(forKey: "k") == nil)
        #expect(alpha.health.staleEpochEntries == 1)
        #expect(try await bravo.value(forKey: "k") == Data("b".utf8))
        let freshBravo = try RedisCache<String, Data>(configuration: bravo.configuration)
        #expect(try await freshBravo.value(forKey: "k") == Data("b".utf8))
        #expect(bravo.health.staleEpochEntries == 0)
        #expect(freshBravo.health.staleEpochEntries == 0)
        await alpha.close()
        await bravo.close()
        await freshBravo.close()
    }

    @Test func anEntryOfAClearedEpochIsAMissForItsEpochNotForDamage() async throws {
        // Given an entry sealed under epoch 0, kept aside, and the namespace cleared (epoch 1)
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let configuration = try RedisTier.configuration(port: server.port)
        let cache = try RedisCache<String, Data>(configuration: configuration)
        try await cache.setValue(Data("old".utf8), forKey: "k", expiry: .never)
        let name = try #require(try await Self.entryNames(raw, namespace: configuration.namespace).first)
        let sealed = try #require(try await raw.get(name))
        try await cache.removeAll()

        // When the old envelope is put back unchanged (it still authenticates: its header says epoch 0)
        _ = try await raw.send([Array("SET".utf8), name, sealed])

        // Then the epoch comparison makes it a miss, counted as an older epoch's entry and not as corruption
        #expect(try await cache.value(forKey: "k") == nil)
        #expect(cache.health.staleEpochEntries == 1)
        #expect(cache.health.corruptEntries == 0)
        await cache.close()
        await raw.connection.close()
    }

    @Test func anEntryReplayedWithAFreshServerTTLAfterItsSealedExpiryIsAnExpiredMiss() async throws {
        // Given an entry written with an hour to live on the tier's clock, its envelope kept aside
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let clock = ManualClock()
        let configuration = try RedisTier.configuration(port: server.port, clock: clock)
        let cache = try RedisCache<String, Data>(configuration: configuration)
        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .hours(1))
        let name = try #require(try await Self.entryNames(raw, namespace: configuration.namespace).first)
        let sealed = try #require(try await raw.get(name))

        // When the tier's clock passes the expiry and the same envelope is written back with three hours to
        // live on the server (the server's TTL no longer protects anything)
        clock.advance(by: 3_601)
        _ = try await raw.send([Array("SET".utf8), name, sealed, Array("PX".utf8), Array("10800000".utf8)])

        // Then the expiry sealed in the envelope decides: a miss counted as an expiration, not as damage,
        // and the key is removed
        #expect(try await cache.value(forKey: "k") == nil)
        #expect(cache.statistics.expirations == 1)
        #expect(cache.health.corruptEntries == 0)
        #expect(try await raw.get(name) == nil)
        await cache.close()
        await raw.connection.close()
    }

    @Test func aNamespaceReKeyedSinceTheCheckIsReportedAsAWrongMasterKeyAndNothingIsDeleted() async throws {
        // Given an instance that checked its master key and wrote an entry
        let server = try RedisServer()
        let raw = try RawRedis(port: server.port)
        let namespace = RedisTier.namespace()
        let owner = try RedisCache<String, Data>(
            configuration: try RedisTier.configuration(port: server.port, namespace: namespace))
        try await owner.setValue(Data("mine".utf8), forKey: "k", expiry: .never)
        let ownerName = try #require(try await Self.entryNames(raw, namespace: namespace).first)

        // When the namespace is re-keyed behind its back (the check record deleted, another master key's
        // holder writes its own record) and an envelope of the new key lands under the owner's entry name
        _ = try await raw.send("DEL", "strata:v2:\(namespace):{\(namespace)}:check")
        let holder = try RedisCache<String, Data>(
            configuration: try RedisTier.configuration(port: server.port, namespace: namespace))
        try await holder.setValue(Data("theirs".utf8), forKey: "k", expiry: .never)
        let holderName = try #require(
            try await Self.entryNames(raw, namespace: namespace).first { $0 != ownerName })
        let theirs = try #require(try await raw.get(holderName))
        _ = try await raw.send([Array("SET".utf8), ownerName, theirs])

        // Then the owner's read that fails to open re-reads the record and reports the other master key,
        // instead of counting the entry as damage; the entry it cannot open stays where it is
        let error = await #expect(throws: CacheError.self) { _ = try await owner.value(forKey: "k") }
        #expect(error?.code == .wrongMasterKey)
        #expect(owner.health.corruptEntries == 0)
        #expect(try await raw.get(ownerName) == theirs)
        await owner.close()
        await holder.close()
        await raw.connection.close()
    }

    @Test func aPausedServerFailsARequestByTheReadDeadlineNotTheWriteDeadline() async throws {
        // Given a connection whose read deadline (200 ms) is far below its write deadline (an hour), set up
        let server = try RedisServer()
        let connection = try RedisTesting.connection(
            port: server.port, readTimeout: .milliseconds(200), writeTimeout: .seconds(3_600))
        _ = try await RedisTesting.settingUp { try await connection.send(RESPCommand("PING")) }

        // When the server stops answering (SIGSTOP) and a request is written
        server.signal(SIGSTOP)
        defer { server.signal(SIGCONT) }
        let result = await withCheckedContinuation { continuation in
            connection.send(RESPCommand("GET", "k")) { continuation.resume(returning: $0) }
        }

        // Then it fails with the read deadline's error (its message names the deadline that ended it; a
        // clock bound here would measure the machine's speed)
        let error = #expect(throws: ConnectionError.self) { try result.get() }
        #expect(error?.code == .deadlineExceeded)
        #expect(error?.message.contains("no reply within the read deadline of") == true, "\(error?.message ?? "")")
        server.signal(SIGCONT)
        await connection.close()
    }
}

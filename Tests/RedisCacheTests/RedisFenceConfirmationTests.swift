import CacheCore
import Foundation
import StrataTestSupport
import Testing

@testable import RedisCache

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// Fences confirmed by a replica (`WAIT`) where the server has one, counted as unconfirmed when none
/// acknowledges in time, and no `WAIT` at all on a server without replicas (Docs/RedisCache.md, "Fences that
/// survive a failover").
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote), .serialized, .timeLimit(.minutes(10)))
struct RedisFenceConfirmationTests {
    @Test func aFenceIsOnTheReplicaWhenTheCallReturns() async throws {
        // Given a primary with one replica in sync, and a tier on the primary
        let (primary, replica) = try await Self.replicatedPair()
        let cache = try RedisCache<String, String>(configuration: RedisTier.configuration(port: primary.port))
        try await cache.setEntry(CacheEntry(value: "v", tags: ["t"]), forKey: "k")

        // When the namespace is cleared and a tag removed
        try await cache.removeAll()
        try await cache.removeAll(taggedWith: "t")

        // Then both fences were confirmed, and the replica holds the counters as the primary does the moment
        // the calls return
        #expect(cache.health.confirmedFences == 2)
        #expect(cache.health.unconfirmedFences == 0)
        // (read with redis-cli: the tier's connections refuse a replica)
        let onPrimary = try RawRedis(port: primary.port)
        let counters = try await onPrimary.allKeys().filter { name in
            name.contains(bytes: Array(":epoch".utf8)) || name.contains(bytes: Array(":t:".utf8))
        }
        #expect(counters.count == 2)
        for name in counters {
            let value = try #require(try await onPrimary.get(name))
            let onReplica = try await RedisCLI.run(port: replica.port, ["GET", String(decoding: name, as: UTF8.self)])
            #expect(onReplica == String(decoding: value, as: UTF8.self))
        }
        await cache.close()
    }

    @Test func aFenceNoReplicaAcknowledgesIsCountedAndStillTakesEffect() async throws {
        // Given a primary whose one replica has stopped answering (the primary still lists it)
        let (primary, replica) = try await Self.replicatedPair()
        var configuration = try RedisTier.configuration(port: primary.port)
        configuration.fenceConfirmationTimeout = .milliseconds(50)
        let cache = try RedisCache<String, String>(configuration: configuration)
        try await cache.setValue("v", forKey: "k")
        replica.signal(SIGSTOP)
        defer { replica.signal(SIGCONT) }

        // When the namespace is cleared
        try await cache.removeAll()

        // Then the call succeeded, the entry is gone, and the fence is counted as not replicated
        #expect(try await cache.value(forKey: "k") == nil)
        #expect(cache.health.unconfirmedFences == 1)
        #expect(cache.health.confirmedFences == 0)
        await cache.close()
    }

    @Test func aRefusedWaitLeavesTheFenceInEffectAndUnconfirmed() async throws {
        // Given a primary with a replica, and a tier whose ACL user may not run WAIT
        let (primary, replica) = try await Self.replicatedPair()
        let raw = try RawRedis(port: primary.port)
        let rule = ["ACL", "SETUSER", "strata", "on", ">secret", "~*", "&*", "+@all", "-wait"]
        #expect(try await raw.send(rule.map { Array($0.utf8) }) == .simpleString("OK"))
        var configuration = try RedisTier.configuration(port: primary.port)
        configuration.username = "strata"
        configuration.password = "secret"
        let cache = try RedisCache<String, String>(configuration: configuration)
        try await cache.setValue("v", forKey: "k")

        // When the namespace is cleared twice (the first fence asks ROLE, the second sends its WAIT in one run)
        try await cache.removeAll()
        try await cache.setValue("w", forKey: "k")
        try await cache.removeAll()

        // Then both calls succeeded, the entries are gone, and both fences count as unconfirmed
        #expect(try await cache.value(forKey: "k") == nil)
        #expect(cache.health.unconfirmedFences == 2)
        #expect(cache.health.confirmedFences == 0)
        await cache.close()
        withExtendedLifetime(replica) {}  // the primary keeps listing it until the end
    }

    @Test func aServerWithoutReplicasIsNeverWaitedOn() async throws {
        // Given a standalone server
        let server = try RedisServer()
        let cache = try RedisCache<String, String>(configuration: RedisTier.configuration(port: server.port))

        // When the namespace is cleared and a tag removed
        try await cache.removeAll()
        try await cache.removeAll(taggedWith: "t")

        // Then no WAIT reached the server and no fence was counted either way
        #expect(try await RawRedis(port: server.port).calls(of: "wait") == 0)
        #expect(cache.health.confirmedFences == 0)
        #expect(cache.health.unconfirmedFences == 0)
        await cache.close()
    }

    @Test func aConfirmationTimeoutPastTheReadDeadlineIsCappedBelowIt() async throws {
        // Given a primary whose replica has stopped answering, a 1 s read deadline and a 10 s confirmation
        let (primary, replica) = try await Self.replicatedPair()
        var configuration = try RedisTier.configuration(port: primary.port)
        configuration.readTimeout = .seconds(1)
        configuration.fenceConfirmationTimeout = .seconds(10)
        let cache = try RedisCache<String, String>(configuration: configuration)
        replica.signal(SIGSTOP)
        defer { replica.signal(SIGCONT) }

        // When the namespace is cleared, then the wait ended before the read deadline: the call succeeded, and
        // the fence is unconfirmed rather than a closed connection
        try await cache.removeAll()
        #expect(cache.health.unconfirmedFences == 1)
        #expect(cache.health.deadlineMisses == 0)
        await cache.close()
    }

    @Test(arguments: [Duration.zero, .milliseconds(-1)])
    func aConfirmationTimeoutThatIsNotPositiveIsRefused(timeout: Duration) throws {
        var configuration = try RedisTier.configuration(port: 6379)
        configuration.fenceConfirmationTimeout = timeout
        #expect {
            _ = try RedisCache<String, String>(configuration: configuration)
        } throws: { error in
            (error as? CacheError)?.code == .invalidArgument
        }
    }

    /// A primary and a replica of it, in sync. The primary starts a replica's first synchronization at once
    /// (Redis 7 waits 5 s by default).
    static func replicatedPair() async throws -> (primary: RedisServer, replica: RedisServer) {
        let primary = try RedisServer(extraArguments: ["--repl-diskless-sync-delay", "0"])
        let replica = try RedisServer(extraArguments: ["--replicaof", "127.0.0.1", String(primary.port)])
        try await waitUntilReplicating(primary: primary.port, replica: replica.port)
        return (primary, replica)
    }

    /// Polls every 20 ms until the primary lists the replica in `ROLE` and the replica's link is up: no event
    /// reports the end of the first synchronization.
    static func waitUntilReplicating(primary: Int, replica: Int) async throws {
        let onPrimary = try RawRedis(port: primary)
        let deadline = ContinuousClock.now + .seconds(60)
        while ContinuousClock.now < deadline {
            let role = try await onPrimary.send("ROLE")
            let info = try await RedisCLI.run(port: replica, ["INFO", "replication"])
            if RedisCache<String, String>.replicaCount(role: role) == 1, info.contains("master_link_status:up") {
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("the replica on \(replica) did not synchronize with \(primary) within 60 s")
    }
}

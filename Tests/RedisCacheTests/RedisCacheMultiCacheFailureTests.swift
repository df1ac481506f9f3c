import CacheTesting
import DiskCache
import Foundation
import MemoryCache
import MultiCache
import StrataTestSupport
import Testing

@testable import RedisCache
@testable import RedisConnection

#if canImport(Glibc)
import Glibc
#endif

/// `MultiCache([memory, disk, redis])` while its Redis server is killed, hung and restarted: what memory or
/// disk holds is served without an error, every operation ends by the tier's deadline, the breaker opens,
/// and the tier is back within about a second of the server accepting again.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisCacheMultiCacheFailureTests {
    /// The longest any operation may take: a hang detector, not a speed figure. The tier's deadlines are
    /// 250/50/100 ms, and an operation that waited on the killed or stopped server without them would wait
    /// until the phase ends (the server is resumed only after every read returned), so this bound fails
    /// such a wait whatever the machine. Timed from test tasks that share 2 cores with the whole suite, a
    /// right operation has been seen at 1.65 s.
    static let operationBound: Duration = .seconds(RedisTesting.isSanitized ? 20 : 10)
    /// The backoff ceiling (1 s) plus room: timed on the I/O thread's own record of the handshake, so only
    /// that thread's scheduling counts; a backoff that grew past its ceiling after the kill phase's
    /// hundreds of failures would take far longer.
    static let recoveryBound: Duration = .seconds(RedisTesting.isSanitized ? 5 : 3)

    final class Stack: Sendable {
        let memory: MemoryCache<Int, Data>
        let disk: DiskCache<Int, Data>
        let redis: RedisCache<Int, Data>
        let multi: MultiCache<Int, Data>
        /// The same namespace and master key with the tests' loose deadlines: setup writes go through it,
        /// so a loaded machine cannot fail the setup on the checked tier's 50 ms read deadline.
        let seeder: RedisCache<Int, Data>

        init(port: Int, folder: URL) throws {
            memory = try MemoryCache(countLimit: 10_000)
            disk = try DiskCache(
                configuration: DiskCacheConfiguration(
                    name: "multi", directory: folder, masterKeySource: .masterKey(RedisTier.randomMasterKey())))
            var configuration = try RedisTier.configuration(port: port)
            var loose = configuration
            loose.tracksInvalidations = false
            seeder = try RedisCache(configuration: loose)
            // The tier's cache-grade defaults, not the tests' loose ones.
            configuration.connectTimeout = .milliseconds(250)
            configuration.readTimeout = .milliseconds(50)
            configuration.writeTimeout = .milliseconds(100)
            configuration.keepAliveInterval = .milliseconds(500)
            // Availability over coherence: with tracking on, losing the server flushes memory and disk
            // (RedisInvalidationTests covers that side).
            configuration.tracksInvalidations = false
            redis = try RedisCache(configuration: configuration)
            multi = try MultiCache([memory, disk, redis])
        }
    }

    /// What 8 concurrent readers saw.
    struct Outcome {
        var errors = 0
        var wrongValues = 0
        var slowest: Duration = .zero
    }

    /// 8 readers, `rounds` reads each, over keys 0..<200: 0..<50 in memory (and below), 50..<100 on disk
    /// (and Redis), 100..<200 in Redis only (a miss is fine there, an error is not).
    static func readConcurrently(_ stack: Stack, rounds: Int) async -> Outcome {
        await withTaskGroup(of: Outcome.self) { group in
            for reader in 0..<8 {
                group.addTask {
                    var outcome = Outcome()
                    var random = SplitMix64(seed: UInt64(reader))
                    for _ in 0..<rounds {
                        let key = Int(random.next() % 200)
                        let start = ContinuousClock.now
                        do {
                            let value = try await stack.multi.value(forKey: key)
                            if key < 100, value != Self.value(key) { outcome.wrongValues += 1 }
                        } catch {
                            outcome.errors += 1
                        }
                        outcome.slowest = max(outcome.slowest, ContinuousClock.now - start)
                    }
                    return outcome
                }
            }
            return await group.reduce(into: Outcome()) { total, one in
                total.errors += one.errors
                total.wrongValues += one.wrongValues
                total.slowest = max(total.slowest, one.slowest)
            }
        }
    }

    static func value(_ key: Int) -> Data { Data("value-\(key)".utf8) }

    /// Writes `keys` to Redis through the seeder, retrying what a loaded machine fails.
    static func seed(_ stack: Stack, keys: Range<Int>) async throws {
        for key in keys {
            try await RedisTesting.settingUp {
                try await stack.seeder.setValue(Self.value(key), forKey: key, expiry: .never)
            }
        }
    }

    @Test func aKilledHungAndRestartedServerNeverFailsWhatMemoryOrDiskHolds() async throws {
        let server = try RedisServer()
        let folder = TemporaryFolder(label: "redis-multi")
        var stack: Stack? = try Stack(port: server.port, folder: folder.url)
        let multi = try #require(stack)
        // Setup: memory and disk directly, Redis through the loosely timed seeder.
        for key in 0..<50 { try multi.memory.setValue(Self.value(key), forKey: key, expiry: .never) }
        for key in 0..<100 { try await multi.disk.setValue(Self.value(key), forKey: key, expiry: .never) }
        try await Self.seed(multi, keys: 0..<200)
        let rounds = StressScale.scaled(400)

        // SIGKILL: reads of what memory or disk holds see no error; the breaker opens
        server.kill9()
        let killed = await Self.readConcurrently(multi, rounds: rounds)
        #expect(killed.errors == 0)
        #expect(killed.wrongValues == 0)
        #expect(killed.slowest < Self.operationBound)
        #expect(multi.redis.health.breakerOpenings >= 1)
        // Writes report a partial failure naming the Redis tier, by the deadline
        let writeStart = ContinuousClock.now
        let writeError = await #expect(throws: CacheError.self) {
            try await multi.multi.setValue(Data("w".utf8), forKey: 1_000, expiry: .never)
        }
        #expect(ContinuousClock.now - writeStart < Self.operationBound)
        #expect(writeError?.code == .tierFailure)
        #expect(writeError?.tierFailures.map(\.index) == [2])
        // Load-once still runs one load per key while Redis is down
        let loads = Locked(0)
        let loaded = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    try await multi.multi.value(forKey: 2_000, expiry: .never) {
                        loads.withLock { $0 += 1 }
                        return Data("loaded".utf8)
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(loaded == Array(repeating: Data("loaded".utf8), count: 8))
        #expect(loads.value == 1)

        // Restarted: the tier is back within about a second of the server accepting
        try server.start()
        let acceptedAt = ContinuousClock.now
        let back = await RedisTesting.wait(timeout: .seconds(30)) { multi.redis.connection.state == .connected }
        #expect(back != nil)
        let recovery = multi.redis.connection.lastConnectedAt.map { max(.zero, $0 - acceptedAt) }
        #expect(recovery.map { $0 < Self.recoveryBound } == true)
        print("redis tier: reconnected \(recovery.map { "\($0)" } ?? "never") after the restarted server accepted")
        try await Self.seed(multi, keys: 100..<200)

        // SIGSTOP: a hung server costs each read at most the deadline, never an error
        server.signal(SIGSTOP)
        let hung = await Self.readConcurrently(multi, rounds: rounds)
        #expect(hung.errors == 0)
        #expect(hung.wrongValues == 0)
        #expect(hung.slowest < Self.operationBound)
        #expect(multi.redis.health.deadlineMisses >= 1)
        server.signal(SIGCONT)
        let resumed = await RedisTesting.wait(timeout: .seconds(30)) {
            multi.redis.connection.state == .connected
        }
        #expect(resumed != nil)
        let healthy = await Self.readConcurrently(multi, rounds: rounds)
        #expect(healthy.errors == 0)

        // No socket or wake-up pipe left behind once the tier is closed
        let wakePipe = Descriptors.target(of: multi.redis.connection.wakeDescriptor)
        let clients = try await Descriptors.clientPorts(of: server.port)
        #expect(!clients.isEmpty)
        await multi.redis.close()
        await multi.seeder.close()
        #expect(Descriptors.sockets(toPort: server.port, fromLocalPorts: clients) == 0)
        _ = consume multi
        stack = nil
        #expect(wakePipe != nil)
        #expect(!Descriptors.targets().contains { $0 == wakePipe })
    }
}

import CacheCore
import Foundation
import MemoryCache
import MultiCache
import RedisConnection
import StrataTestSupport
import Testing

@testable import RedisCache

/// Load-once across processes over a real server (issue 27, part 3): `MultiCache([memory, redis])` stacks on
/// one namespace, each with its own `RedisCache` instance — separate processes, as far as Redis can tell. One
/// stack's load takes the lease; the others wait for its value and serve it. Waits end on events (a held
/// loader, a counted turn), never on a clock; leases last an hour unless the test expires one on the server.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote), .serialized, .timeLimit(.minutes(10)))
struct RedisLeasedLoadTests {
    /// One process's stack.
    struct Stack {
        let memory: MemoryCache<String, String>
        let redis: RedisCache<String, String>
        let multi: MultiCache<String, String>

        init(_ configuration: RedisCacheConfiguration) throws {
            memory = try MemoryCache()
            redis = try RedisCache(configuration: configuration)
            multi = try MultiCache(tiers: [.init(memory), .init(redis)])
        }
    }

    /// `count` stacks sharing one namespace on `server`.
    static func fleet(
        _ count: Int, on server: RedisServer,
        lease: RedisCacheConfiguration.LoadLease? = .init(duration: .seconds(3_600), maximumWait: .seconds(3_600))
    ) throws -> [Stack] {
        var configuration = try RedisTier.configuration(
            port: server.port, namespace: RedisTier.namespace(), masterKey: RedisTier.randomMasterKey())
        configuration.loadLease = lease
        return try (0..<count).map { _ in try Stack(configuration) }
    }

    /// Counts the loader's runs.
    final class Runs: Sendable {
        private let count = Locked(0)
        func add() { count.withLock { $0 += 1 } }
        var value: Int { count.withLock { $0 } }
    }

    /// Suspends until `condition` holds, looking again after each short pause; gives up with a failure after 3
    /// minutes (an event that never comes: a broken feature, not a slow machine — a ThreadSanitizer run on two
    /// loaded cores has held a task back for over a minute).
    static func waitUntil(
        _ condition: () -> Bool, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let patience = ContinuousClock.now + .seconds(180)
        while !condition() {
            guard ContinuousClock.now < patience else {
                Issue.record("the awaited event did not come within 3 minutes", sourceLocation: sourceLocation)
                throw CancellationError()
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test func aColdKeyMissedByFourProcessesAtOnceIsLoadedOnceAndServedToEveryCaller() async throws {
        // Given four stacks whose 8 callers each miss "k" together, and a loader held open once it starts
        let server = try RedisServer()
        let fleet = try Self.fleet(4, on: server)
        let runs = Runs()
        let loader = HeldLoader()
        let calls = Task {
            try await withThrowingTaskGroup(of: String.self) { group in
                for stack in fleet {
                    for _ in 0..<8 {
                        group.addTask {
                            try await stack.multi.value(forKey: "k", expiry: .seconds(600)) {
                                runs.add()
                                try await loader.hold()
                                return "loaded once"
                            }
                        }
                    }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
        }
        // When one process holds the lease and loads, and the three others are waiting for it
        try await loader.waitUntilHeld()
        // (the lease it loads under lasts the policy's hour on the server, not a moment: a lease that ended while
        // the load ran would let every process that misses "k" afterwards load it too, whatever the timing here)
        let redis = fleet[0].redis
        let lease = redis.keys.sibling(ofEntry: try redis.entryName(Data("k".utf8)), "l")
        var leaseLeft = -2
        if case .integer(let milliseconds) = try await redis.send(
            RESPCommand(arguments: [Array("PTTL".utf8), lease]), key: lease)
        {
            leaseLeft = Int(milliseconds)
        }
        #expect(leaseLeft > 3_000_000, "the held lease has \(leaseLeft) ms left")
        try await Self.waitUntil { fleet.map(\.redis.leaseTurns.waited).reduce(0, +) == 3 }
        loader.release()
        let values = try await calls.value

        // Then the loader ran once, every caller got its value, and Redis holds it once
        #expect(runs.value == 1)
        #expect(values.count == 32)
        #expect(values.allSatisfy { $0 == "loaded once" })
        #expect(fleet.map(\.redis.leaseTurns.held).reduce(0, +) == 1)
        #expect(fleet.map(\.redis.leaseTurns.landed).reduce(0, +) == 3)
        for stack in fleet { #expect(try await stack.multi.value(forKey: "k") == "loaded once") }
        #expect(
            fleet[0].redis.statistics.insertions + fleet[1].redis.statistics.insertions
                + fleet[2].redis.statistics.insertions + fleet[3].redis.statistics.insertions == 1)
    }

    @Test func theLoadsStoreGivesTheLeaseUpInItsOwnScript() async throws {
        // Given a stack whose load of "k" takes the lease
        let server = try RedisServer()
        let fleet = try Self.fleet(1, on: server)
        #expect(try await fleet[0].multi.value(forKey: "k", expiry: .seconds(600)) { "v" } == "v")
        // Then by the time the caller has its value, the store's script has stored it and given the lease up:
        // no release of its own was needed, and the next process takes the lease at once
        #expect(fleet[0].redis.leaseTurns.held == 1)
        #expect(fleet[0].redis.leaseTurns.releasedInStore == 1)
        // And its ticket took the removal counter the lease's script had read: the lease cost no round trip
        #expect(fleet[0].redis.leaseTurns.ticketsFromLease == 1)
        let name = try fleet[0].redis.entryName(Data("k".utf8))
        #expect(try await fleet[0].redis.isLeaseHeld(onEntry: name) == false)
        #expect(try await fleet[0].redis.value(forKey: "k") == "v")
    }

    @Test func aTurnAskedAfterAnotherProcessStoredServesThatEntryWithoutALease() async throws {
        // Given a process whose read of "k" missed, and another that then loaded it, stored it and gave its
        // lease up (the window that let a second process load in 4 of 100 trials of 8 processes)
        let server = try RedisServer()
        let fleet = try Self.fleet(2, on: server)
        try await fleet[1].redis.setValue("stored by the other", forKey: "k", expiry: .seconds(600))
        // When the first asks for its turn to load, then it is handed that entry and takes no lease
        guard case .landed(let entry) = await fleet[0].redis.loadTurn(forKey: "k") else {
            Issue.record("the turn took the lease although the entry was there")
            return
        }
        #expect(entry.value == "stored by the other")
        #expect(fleet[0].redis.leaseTurns.held == 0)
        #expect(fleet[0].redis.leaseTurns.landed == 1)
        let name = try fleet[0].redis.entryName(Data("k".utf8))
        #expect(try await fleet[0].redis.isLeaseHeld(onEntry: name) == false)
    }

    @Test func aHolderThatDiesWithoutStoringIsTakenOverOnceItsLeaseExpires() async throws {
        // Given a process that took the lease on "k" and died (never stores, never releases)
        let server = try RedisServer()
        let fleet = try Self.fleet(2, on: server)
        let dead = fleet[0].redis
        guard case .acquired = try await dead.acquireLease(forKey: "k", duration: .seconds(60)) else {
            Issue.record("the first lease on a fresh key was not granted")
            return
        }
        // When another process misses "k", waits, and the dead holder's lease then expires on the server
        let runs = Runs()
        let waiting = Task {
            try await fleet[1].multi.value(forKey: "k") {
                runs.add()
                return "taken over"
            }
        }
        try await Self.waitUntil { fleet[1].redis.leaseTurns.waited == 1 }
        let lease = dead.keys.sibling(ofEntry: try dead.entryName(Data("k".utf8)), "l")
        _ = try await dead.send(RESPCommand(arguments: [Array("PEXPIRE".utf8), lease, Array("1".utf8)]), key: lease)
        // Then it takes the lease over and loads once
        #expect(try await waiting.value == "taken over")
        #expect(runs.value == 1)
        #expect(fleet[1].redis.leaseTurns.held == 1)
        #expect(try await dead.value(forKey: "k") == "taken over")
    }

    @Test func aLoaderErrorReleasesTheLeaseSoTheNextProcessLoadsAtOnce() async throws {
        let server = try RedisServer()
        // Leases that would outlast the test: only a release frees this one
        let fleet = try Self.fleet(2, on: server, lease: .init(duration: .seconds(3_600), maximumWait: .seconds(30)))
        struct Failed: Error {}
        await #expect(throws: Failed.self) {
            try await fleet[0].multi.value(forKey: "k") { throw Failed() }
        }
        // The release runs on a task of its own: wait for the lease to be free
        let name = try fleet[1].redis.entryName(Data("k".utf8))
        let patience = ContinuousClock.now + .seconds(180)
        while try await fleet[1].redis.isLeaseHeld(onEntry: name), ContinuousClock.now < patience {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(try await !fleet[1].redis.isLeaseHeld(onEntry: name))
        let value = try await fleet[1].multi.value(forKey: "k") { "second" }
        #expect(value == "second")
        #expect(fleet[1].redis.leaseTurns.waited == 0)
        #expect(fleet[1].redis.leaseTurns.held == 1)
    }

    /// How the server fails under a waiting process.
    enum ServerFault: String, CaseIterable, Sendable {
        /// `SIGKILL`: its connections are refused at once.
        case killed
        /// `SIGSTOP`: it stops answering; the waiter's next look fails at its read timeout.
        case paused
    }

    @Test(arguments: ServerFault.allCases)
    func aServerFailingMidWaitLetsTheWaiterLoadItselfAtMostOncePerProcess(_ fault: ServerFault) async throws {
        // Given one process holding the lease and loading, and another waiting for it
        let server = try RedisServer()
        let fleet = try Self.fleet(2, on: server)
        let runs = Runs()
        let holder = HeldLoader()
        let holding = Task {
            try await fleet[0].multi.value(forKey: "k") {
                runs.add()
                try await holder.hold()
                return "holder"
            }
        }
        try await holder.waitUntilHeld()
        let waiting = Task {
            try await fleet[1].multi.value(forKey: "k") {
                runs.add()
                return "waiter"
            }
        }
        try await Self.waitUntil { fleet[1].redis.leaseTurns.waited == 1 }
        // When the server is killed, or stops answering
        switch fault {
        case .killed: server.kill9()
        case .paused: server.signal(SIGSTOP)
        }
        defer { if fault == .paused { server.signal(SIGCONT) } }
        // Then the waiter loads itself rather than wait out the lease, the holder finishes (its store fails
        // quietly), and each process loaded once
        #expect(try await waiting.value == "waiter")
        holder.release()
        #expect(try await holding.value == "holder")
        #expect(runs.value == 2)
        #expect(fleet[1].redis.leaseTurns.unleased == 1)
    }

    @Test func withLeasesOffEveryProcessLoadsForItself() async throws {
        let server = try RedisServer()
        let fleet = try Self.fleet(2, on: server, lease: nil)
        let runs = Runs()
        let holder = HeldLoader()
        let first = Task {
            try await fleet[0].multi.value(forKey: "k") {
                runs.add()
                try await holder.hold()
                return "first"
            }
        }
        try await holder.waitUntilHeld()
        #expect(try await fleet[1].multi.value(forKey: "k") { "second" } == "second")
        holder.release()
        #expect(try await first.value == "first")
        #expect(fleet[1].redis.leaseTurns == RedisLeaseTurns(unleased: 1))
    }

    @Test func aRedisCacheAloneSharesItsLoadWithAnotherInstance() async throws {
        let server = try RedisServer()
        let (first, second) = try RedisLoadFenceTests.pair(server)
        let runs = Runs()
        let holder = HeldLoader()
        let holding = Task {
            try await first.value(forKey: "k") {
                runs.add()
                try await holder.hold()
                return "once"
            }
        }
        try await holder.waitUntilHeld()
        let waiting = Task {
            try await second.value(forKey: "k") {
                runs.add(); return "twice"
            }
        }
        try await Self.waitUntil { second.leaseTurns.waited == 1 }
        holder.release()
        #expect(try await holding.value == "once")
        #expect(try await waiting.value == "once")
        #expect(runs.value == 1)
    }
}

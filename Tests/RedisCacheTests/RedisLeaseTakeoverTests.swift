import CacheCore
import Foundation
import RedisConnection
import StrataTestSupport
import Testing

@testable import RedisCache

/// The takeover wait, step by step (`RedisCache.loadTurn(forKey:)`): a waiter whose wait ends while another
/// process holds a lease taken after that wait began waits for the new holder instead of loading too. The
/// process and CLI fleet tests meet this only when scheduling lets them; here the test itself takes the lease
/// over, with one `SET` so that the waiter can never find it free, and the waiter looks only at its start, on a
/// push and at its deadline (it polls once an hour).
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote), .serialized, .timeLimit(.minutes(15)))
struct RedisLeaseTakeoverTests {
    /// What one attempt's waiter ended with.
    struct Outcome {
        let turn: LoadTurn<String>
        let turns: RedisLeaseTurns
    }

    @Test func aWaiterWhoseDeadlineFindsALeaseYoungerThanItsWaitWaitsForThatHolder() async throws {
        // Each attempt is conclusive only when the test's two steps came before the waiter's deadlines; a loaded
        // machine gets a longer wait next time, not a failure. Seven attempts reach a wait of 128 s: under
        // ThreadSanitizer beside builds and other suites, five (up to 32 s) were once all too slow.
        var wait = Duration.seconds(2)
        for attempt in 0..<7 {
            if let outcome = try await Self.attempt(key: "k\(attempt)", maximumWait: wait) {
                guard case .landed(let entry) = outcome.turn else {
                    Issue.record("the waiter loaded instead of waiting for the new holder; turns: \(outcome.turns)")
                    return
                }
                #expect(entry.value == "loaded by the new holder")
                #expect(outcome.turns.waited == 2)
                #expect(outcome.turns.unleased == 0)
                #expect(outcome.turns.held == 0)
                return
            }
            wait *= 2
        }
        Issue.record("no attempt finished its steps within the waiter's deadline")
    }

    /// One attempt on a server of its own; `nil` when the machine was too slow for the waiter's deadlines to
    /// prove anything.
    static func attempt(key: String, maximumWait: Duration) async throws -> Outcome? {
        let server = try RedisServer()
        var configuration = try RedisTier.configuration(
            port: server.port, namespace: RedisTier.namespace(), masterKey: RedisTier.randomMasterKey())
        configuration.loadLease = .init(
            duration: .seconds(3_600), maximumWait: maximumWait, pollInterval: .seconds(3_600))
        let first = try RedisCache<String, String>(configuration: configuration)
        let waiter = try RedisCache<String, String>(configuration: configuration)

        // Given a holder with the lease on the key, and a waiter that finds it held
        guard case .acquired = try await first.acquireLease(forKey: key, duration: .seconds(3_600)) else {
            Issue.record("the first lease on a fresh key was not granted")
            throw CancellationError()
        }
        let started = ContinuousClock.now
        let turn = Task { await waiter.loadTurn(forKey: key) }
        try await RedisLeasedLoadTests.waitUntil { waiter.leaseWakes.unfinished >= 1 }

        // When another process takes the lease over before the waiter's deadline (one SET: never free between)
        let lease = first.keys.sibling(ofEntry: try first.entryName(Data(key.utf8)), "l")
        _ = try await first.send(
            RESPCommand(arguments: [
                Array("SET".utf8), lease, Array("new holder".utf8), Array("PX".utf8), Array("3600000".utf8),
            ]), key: lease)
        let tookOver = ContinuousClock.now

        // Then at its deadline the waiter finds a lease younger than its wait and waits afresh, and the new
        // holder's store ends that wait
        try await RedisLeasedLoadTests.waitUntil {
            waiter.leaseTurns.waited == 2 || waiter.leaseTurns.unleased > 0
        }
        if waiter.leaseTurns.waited == 2 {
            try await first.setValue("loaded by the new holder", forKey: key)
        }
        let stored = ContinuousClock.now
        let outcome = Outcome(turn: await turn.value, turns: waiter.leaseTurns)
        // The first deadline is at least `maximumWait` after `started`, the second at least twice that.
        guard tookOver < started + maximumWait, stored < started + maximumWait * 2 else { return nil }
        return outcome
    }
}

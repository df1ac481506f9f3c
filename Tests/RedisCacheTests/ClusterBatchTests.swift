import CacheCore
import Testing

@testable import RedisConnection

/// A batch's failures stay per command and inside the batch's one deadline, against a scripted node in
/// cluster mode whose map may leave slots without a primary; the deadline is read from a clock the test
/// steps, never from waiting.
@Suite struct ClusterBatchTests {
    @Test func aSlotWithoutPrimaryFailsOnlyItsCommandsWithATypedError() async throws {
        // Given a node that serves slots 0…8191 and a map in which no primary serves 8192…16383
        let node = try ScriptedClusterNode(lastServedSlot: 8_191) { _ in "$1\r\nv\r\n" }
        let connection = node.connection(operationTimeout: .milliseconds(200))
        let served = Self.key { $0 <= 8_191 }
        let orphan = Self.key { $0 > 8_191 }

        // When a batch reads a key of each half
        let results = try await connection.send(batch: [
            (RESPCommand("GET", served), Array(served.utf8)), (RESPCommand("GET", orphan), Array(orphan.utf8)),
        ])
        // Then the served key's command succeeds and only the other one fails, with CLUSTERDOWN
        #expect(results.count == 2)
        #expect(try results[0].get() == .bulkString(Array("v".utf8)))
        #expect(throws: ConnectionError.self) { try results[1].get() }
        if case .failure(let error as ConnectionError) = results[1] {
            #expect(error.code == .serverError)
            #expect(error.message.hasPrefix("CLUSTERDOWN"))
        }
        await connection.close()
    }

    @Test(arguments: ["MOVED", "ASK", "TRYAGAIN"])
    func aCommandRetriedAfterTheBatchDeadlineIsNotSentAgain(answer: String) async throws {
        // Given a batch of `ok` and `late` whose node answers `late` with `answer` once the batch's clock has
        // passed its 1 s deadline
        let run = try await Self.batch(answeringLateWith: answer, steppingTheClockBy: .seconds(1) + .milliseconds(1))
        // Then `ok` succeeds, and `late` fails with that answer without being sent again
        #expect(run.results.count == 2)
        #expect(try run.results[0].get() == .bulkString(Array("ok".utf8)))
        if case .failure(let error as ConnectionError) = run.results[1] {
            #expect(error.message.hasPrefix(answer))
        } else {
            Issue.record("the late command did not fail with its answer: \(run.results[1])")
        }
        #expect(run.gets(of: "late") == 1)
        #expect(run.gets(of: "ok") == 1)
    }

    @Test(arguments: ["MOVED", "ASK", "TRYAGAIN"])
    func aCommandRetriedInsideTheBatchDeadlineIsSentAgain(answer: String) async throws {
        // Given the same batch, whose node answers `late` with `answer` 1 ms before the batch's deadline
        let run = try await Self.batch(answeringLateWith: answer, steppingTheClockBy: .seconds(1) - .milliseconds(1))
        // Then `late` is sent again and its second reply is its result
        #expect(try run.results.map { try $0.get() } == [.bulkString(Array("ok".utf8)), .bulkString(Array("v".utf8))])
        #expect(run.gets(of: "late") == 2)
        #expect(run.gets(of: "ok") == 1)
    }

    /// A batch's results and what its node received.
    private struct BatchRun {
        var results: [Result<RESPValue, any Error>]
        var commands: [[String]]

        /// How many times the node received `GET key`.
        func gets(of key: String) -> Int { commands.filter { $0 == ["GET", key] }.count }
    }

    /// Sends the batch `GET ok`, `GET late` (1 s deadline) through a one-node cluster that answers `ok` with
    /// its name, answers `late` first with `answer` (a redirection to itself, or the state) after stepping the
    /// connection's clock by `step`, and any later `GET` with `v`. No real time passes on that clock: the step
    /// is the only time the deadline sees.
    private static func batch(
        answeringLateWith answer: String, steppingTheClockBy step: Duration
    ) async throws -> BatchRun {
        let clock = Locked(ContinuousClock.now)
        let port = Locked(0)
        let lateSlot = HashSlot(key: Array("late".utf8)).rawValue
        // The batch's two commands reach the node in order, one run on one connection: GET 1 is `ok`, GET 2
        // `late`; a third GET can only be `late` sent again
        let node = try ScriptedClusterNode { count in
            switch count {
            case 1: return "$2\r\nok\r\n"
            case 2:
                // Stepped while the node holds the reply: the batch sees the answer only after its deadline moved
                clock.withLock { $0 += step }
                switch answer {
                case "MOVED", "ASK": return "-\(answer) \(lateSlot) 127.0.0.1:\(port.withLock { $0 })\r\n"
                default: return "-\(answer) Multiple keys request during rehashing of slot\r\n"
                }
            default: return "$1\r\nv\r\n"
            }
        }
        port.withLock { $0 = node.server.port }
        let connection = node.connection(operationTimeout: .seconds(1), now: { clock.withLock { $0 } })
        let results = try await connection.send(batch: [
            (RESPCommand("GET", "ok"), Array("ok".utf8)), (RESPCommand("GET", "late"), Array("late".utf8)),
        ])
        await connection.close()
        return BatchRun(results: results, commands: node.server.commands)
    }

    /// The first key of the form `k<n>` whose slot satisfies `accepts`.
    private static func key(where accepts: (Int) -> Bool) -> String {
        (0...).lazy.map { "k\($0)" }.first { accepts(HashSlot(key: Array($0.utf8)).rawValue) }!
    }
}

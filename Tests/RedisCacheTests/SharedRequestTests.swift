import CacheCore
import Testing

@testable import RedisConnection

/// A shared request (``RedisConnection/TogetherRequest/isShared``) joins the same command only while it is
/// still queued: once the I/O thread has taken the queue (to write it), a caller queues its own, so no caller
/// is answered by a command written before it asked. Driven on a connection core with no I/O thread.
@Suite struct SharedRequestTests {
    final class Replies: Sendable {
        let byCaller = Locked<[String: RESPValue]>([:])

        func completion(_ caller: String) -> ConnectionCore.Completion {
            { reply in self.byCaller.withLock { $0[caller] = try? reply.get() } }
        }
    }

    static func core() throws -> ConnectionCore {
        ConnectionCore(configuration: RedisConnection.Configuration(port: 1), wakePipe: try #require(WakePipe()))
    }

    @Test func aCallerJoinsAQueuedCommandButNeverOneTheIOThreadHasTaken() throws {
        let core = try Self.core()
        let replies = Replies()
        let epoch = RESPCommand("GET", "epoch")
        // A queues the command; B, asking for the same while it is queued, joins it; C's command is another
        core.submitShared(epoch, completion: replies.completion("A"))
        core.submitShared(epoch, completion: replies.completion("B"))
        core.submitShared(RESPCommand("GET", "other"), completion: replies.completion("C"))
        #expect(core.withState { $0.queued.count } == 2)
        // The I/O thread takes the queue (to write it); D asks for the same command afterwards
        var outbox: [UInt8] = []
        var taken: [ConnectionCore.Queued] = []
        core.withState { $0.takeQueued(outbox: &outbox, queued: &taken) }
        core.submitShared(epoch, completion: replies.completion("D"))
        #expect(core.withState { $0.queued.count } == 1)
        // The taken command's reply answers A and B, never D, whose own command comes after it
        let first = core.withState { $0.completions.removeValue(forKey: taken[0].id) }
        first?(.success(.integer(1)))
        #expect(replies.byCaller.value == ["A": .integer(1), "B": .integer(1)])
        let own = core.withState { $0.completions.removeValue(forKey: $0.queued[0].id) }
        own?(.success(.integer(2)))
        #expect(replies.byCaller.value["D"] == .integer(2))
        #expect(core.withState { $0.statistics.sharedReplies } == 1)
        #expect(outbox.count > 0)
    }

    @Test func twoHundredThousandCallersJoiningOneRequestAreEachAnsweredOnce() throws {
        // Given as many reads joining one queued request as a long reconnect could gather (their callers are
        // called in a loop: nested, they would overflow the I/O thread's stack)
        let core = try Self.core()
        let answered = Locked(0)
        for _ in 0..<200_000 {
            core.submitShared(RESPCommand("GET", "epoch")) { _ in answered.withLock { $0 += 1 } }
        }
        #expect(core.withState { $0.queued.count } == 1)
        // When its reply comes, then every caller got it once
        let completion = core.withState { $0.completions.removeValue(forKey: $0.queued[0].id) }
        completion?(.success(.integer(1)))
        #expect(answered.value == 200_000)
        #expect(core.withState { $0.statistics.sharedReplies } == 199_999)
    }

    @Test func aRefusingConnectionFailsASharedRequestAtOnce() throws {
        let core = try Self.core()
        let failed = Locked(false)
        core.close()
        core.submitShared(RESPCommand("GET", "epoch")) { reply in
            if case .failure = reply { failed.withLock { $0 = true } }
        }
        #expect(failed.value)
    }
}

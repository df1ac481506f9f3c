import CacheCore
import Testing

@testable import RedisConnection

/// The group-commit rule of ``SharedReads``, driven by hand: which caller sends, which reply each caller gets,
/// and that no caller is ever given the reply of a command written before it joined.
@Suite struct SharedReadsTests {
    /// What each caller received, by name, and the commands the line asked to send.
    final class Record: Sendable {
        let replies = Locked<[String: Result<RESPValue, any Error>]>([:])
        let pending = Locked<[SharedReads.Waiter]>([])

        func waiter(_ name: String) -> SharedReads.Waiter {
            { reply in self.replies.withLock { $0[name] = reply } }
        }

        func value(_ name: String) -> RESPValue? {
            replies.withLock { try? $0[name]?.get() }
        }

        /// Sends the next group's command: kept until the test answers it.
        var sending: @Sendable (@escaping SharedReads.Waiter) -> Void {
            { completion in self.pending.withLock { $0.append(completion) } }
        }

        /// Answers the oldest command the line sent.
        func answerNext(_ reply: Result<RESPValue, any Error>) {
            let completion = pending.withLock { $0.removeFirst() }
            completion(reply)
        }
    }

    static let line = SharedReads.Line(connection: ObjectIdentifier(SharedReads.self), arguments: [Array("GET".utf8)])

    @Test func callersWhileACommandIsInFlightGetTheNextCommandsReplyNeverTheOneInFlight() {
        let reads = SharedReads()
        let record = Record()
        // A alone: it sends its own command
        #expect(reads.join(Self.line, waiter: record.waiter("A")))
        // B and C come while A's command is in flight: they wait for the next one
        #expect(!reads.join(Self.line, waiter: record.waiter("B")))
        #expect(!reads.join(Self.line, waiter: record.waiter("C")))
        // A's reply (the counter as it was when A's command was written) goes to A alone; the next is sent
        reads.answered(.success(.integer(1)), on: Self.line, sendingNext: record.sending)
        #expect(record.value("B") == nil)
        #expect(record.value("C") == nil)
        #expect(record.pending.value.count == 1)
        // D comes while B and C's command is in flight: it waits for the one after
        #expect(!reads.join(Self.line, waiter: record.waiter("D")))
        record.answerNext(.success(.integer(2)))
        #expect(record.value("B") == .integer(2))
        #expect(record.value("C") == .integer(2))
        #expect(record.value("D") == nil)
        record.answerNext(.success(.integer(3)))
        #expect(record.value("D") == .integer(3))
        // Nobody waits now: the line ended, and the next caller sends its own
        #expect(record.pending.value.isEmpty)
        #expect(reads.sharedReplies == 3)
        #expect(reads.join(Self.line, waiter: record.waiter("E")))
    }

    @Test func aFailureGoesToTheWaitingGroupAtOnceAndEndsTheLine() {
        let reads = SharedReads()
        let record = Record()
        #expect(reads.join(Self.line, waiter: record.waiter("A")))
        #expect(!reads.join(Self.line, waiter: record.waiter("B")))
        reads.answered(
            .failure(ConnectionError(.deadlineExceeded, "no reply")), on: Self.line, sendingNext: record.sending)
        // B is failed without a command of its own: a stopped node costs it one deadline, not two
        #expect(record.pending.value.isEmpty)
        let failure = record.replies.withLock { $0["B"] }
        #expect((failure.map { if case .failure = $0 { true } else { false } }) == true)
        // And the line ended: the next caller sends
        #expect(reads.join(Self.line, waiter: record.waiter("C")))
    }

    @Test func linesOfOtherConnectionsOrCommandsAreNotShared() {
        let reads = SharedReads()
        let record = Record()
        let other = SharedReads.Line(connection: ObjectIdentifier(Record.self), arguments: Self.line.arguments)
        let otherCommand = SharedReads.Line(connection: Self.line.connection, arguments: [Array("GET".utf8), [1]])
        #expect(reads.join(Self.line, waiter: record.waiter("A")))
        #expect(reads.join(other, waiter: record.waiter("B")))
        #expect(reads.join(otherCommand, waiter: record.waiter("C")))
    }
}

import Foundation
import Testing

@testable import RedisConnection

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// The bridge between a callback-driven stream (Network.framework's TLS on Apple platforms) and the poll loop:
/// the bytes come out in order, the pipe is readable exactly while a read would not block, the end and
/// failures come after the buffered bytes, receiving pauses at the limit, and every wait is bounded by events
/// or an already-passed deadline, never by a sleep.
@Suite struct ReadinessBufferTests {
    private func makeOpenBuffer(receiveLimit: Int = 1 << 20) throws -> ReadinessBuffer {
        let buffer = try #require(ReadinessBuffer(receiveLimit: receiveLimit))
        buffer.markOpen()
        buffer.beginReceiving()
        return buffer
    }

    /// Reads up to `count` bytes: the bytes, or the progress that was not `.bytes`.
    private func read(_ buffer: ReadinessBuffer, upTo count: Int) -> (bytes: [UInt8], progress: Socket.Progress) {
        var chunk = [UInt8](repeating: 0, count: count)
        let (progress, _) = chunk.withUnsafeMutableBytes { buffer.take(into: $0) }
        guard case .bytes(let read) = progress else { return ([], progress) }
        return (Array(chunk[0..<read]), progress)
    }

    /// `poll(2)`'s answer for the buffer's descriptor right now (no waiting).
    private func pollNow(_ buffer: ReadinessBuffer, events: Int32) -> Int32 {
        var entry = pollfd(fd: buffer.descriptor, events: Int16(events), revents: 0)
        _ = poll(&entry, 1, 0)
        return Int32(entry.revents)
    }

    @Test func deliveredBytesComeOutInOrderThenAReadWouldBlock() throws {
        // Given an open buffer with two deliveries
        let buffer = try makeOpenBuffer()
        #expect(buffer.deliver(Array("abc".utf8), isComplete: false, failure: nil))
        #expect(buffer.deliver(Array("de".utf8), isComplete: false, failure: nil))
        // When read in four-byte chunks
        // Then the bytes come out in order, then nothing without waiting
        #expect(read(buffer, upTo: 4).bytes == Array("abcd".utf8))
        #expect(read(buffer, upTo: 4).bytes == Array("e".utf8))
        #expect(read(buffer, upTo: 4).progress == .wouldBlock)
        #expect(!buffer.hasInput)
    }

    @Test func theDescriptorIsReadableExactlyWhileAReadWouldNotBlock() throws {
        let buffer = try makeOpenBuffer()
        #expect(pollNow(buffer, events: POLLIN) == 0)
        _ = buffer.deliver(Array("x".utf8), isComplete: false, failure: nil)
        _ = buffer.deliver(Array("y".utf8), isComplete: false, failure: nil)
        #expect(pollNow(buffer, events: POLLIN) & POLLIN != 0)
        #expect(buffer.hasInput)
        // A partial read leaves the pipe readable; the read that empties the buffer clears it.
        #expect(read(buffer, upTo: 1).bytes == Array("x".utf8))
        #expect(pollNow(buffer, events: POLLIN) & POLLIN != 0)
        #expect(read(buffer, upTo: 1).bytes == Array("y".utf8))
        #expect(pollNow(buffer, events: POLLIN) == 0)
        // And it turns readable again on the next delivery.
        _ = buffer.deliver(Array("z".utf8), isComplete: false, failure: nil)
        #expect(pollNow(buffer, events: POLLIN) & POLLIN != 0)
    }

    @Test func anEndedStreamGivesItsBytesThenTheEndAndHangsUp() throws {
        let buffer = try makeOpenBuffer()
        #expect(!buffer.deliver(Array("ok".utf8), isComplete: true, failure: nil))
        #expect(buffer.currentPhase == .ended)
        #expect(read(buffer, upTo: 64).bytes == Array("ok".utf8))
        #expect(read(buffer, upTo: 64).progress == .endOfStream)
        #expect(buffer.hasInput)
        #expect(pollNow(buffer, events: POLLIN) != 0)
        #if os(Linux)
        // A poll for a hang-up alone (the parked connection's) sees the closed write end. Darwin's answer for
        // a pipe is read in Apple's poll(2) page only (Docs/Platforms.md).
        #expect(pollNow(buffer, events: 0) & POLLHUP != 0)
        #endif
    }

    @Test func aFailureComesAfterTheBufferedBytes() throws {
        let buffer = try makeOpenBuffer()
        #expect(!buffer.deliver(Array("p".utf8), isComplete: false, failure: ECONNRESET))
        #expect(read(buffer, upTo: 8).bytes == Array("p".utf8))
        #expect(read(buffer, upTo: 8).progress == .failed(ECONNRESET))
        // A later failure report changes nothing: the first end stands.
        buffer.markBroken(EPIPE)
        #expect(read(buffer, upTo: 8).progress == .failed(ECONNRESET))
    }

    @Test func aSendFailureEndsAnOpenStream() throws {
        let buffer = try makeOpenBuffer()
        buffer.markBroken(EPIPE)
        #expect(buffer.currentPhase == .broken(EPIPE))
        #expect(read(buffer, upTo: 8).progress == .failed(EPIPE))
        #expect(!buffer.deliver(Array("late".utf8), isComplete: false, failure: nil))
    }

    @Test func receivingPausesAtTheLimitAndResumesOnceTheReaderTakesSome() throws {
        // Given a limit of 8 bytes
        let buffer = try makeOpenBuffer(receiveLimit: 8)
        // When deliveries reach it, the producer is told to stop
        #expect(buffer.deliver([UInt8](repeating: 1, count: 5), isComplete: false, failure: nil))
        #expect(!buffer.deliver([UInt8](repeating: 2, count: 5), isComplete: false, failure: nil))
        // Then the read that brings it under the limit asks for the next receive, once
        var chunk = [UInt8](repeating: 0, count: 4)
        let first = chunk.withUnsafeMutableBytes { buffer.take(into: $0) }
        #expect(first.progress == .bytes(4))
        #expect(first.resume)
        let second = chunk.withUnsafeMutableBytes { buffer.take(into: $0) }
        #expect(second.progress == .bytes(4))
        #expect(!second.resume)
        #expect(read(buffer, upTo: 8).bytes == [2, 2])
    }

    @Test func nothingIsBufferedBeforeTheStreamIsOpen() throws {
        let buffer = try #require(ReadinessBuffer())
        #expect(!buffer.deliver(Array("early".utf8), isComplete: false, failure: nil))
        #expect(!buffer.hasInput)
        buffer.markBroken(EPIPE)  // only an open stream breaks
        #expect(buffer.currentPhase == .connecting)
    }

    @Test func establishingEndsAtTheFirstVerdictOrTheDeadline() throws {
        // A deadline already passed: still connecting.
        let pending = try #require(ReadinessBuffer())
        #expect(pending.awaitEstablished(until: .now) == .connecting)
        // Refused, then a late "ready" changes nothing.
        let refused = try #require(ReadinessBuffer())
        refused.markRefused()
        refused.markOpen()
        #expect(refused.awaitEstablished(until: .now) == .refused)
        #expect(read(refused, upTo: 8).progress == .failed(ECONNREFUSED))
    }

    @Test func aWaiterWakesWhenAnotherThreadOpensTheStream() throws {
        let buffer = try #require(ReadinessBuffer())
        // The producer runs on another thread; the wait is bounded by that event (and a generous deadline).
        let producer = Thread { buffer.markOpen() }
        producer.start()
        #expect(buffer.awaitEstablished(until: .now.advanced(by: .seconds(60))) == .open)
    }

    @Test func waitingForInputWakesOnDeliveryOrGivesUpAtThePassedDeadline() throws {
        let buffer = try makeOpenBuffer()
        #expect(!buffer.waitForInput(until: .now))
        let producer = Thread { _ = buffer.deliver(Array("r".utf8), isComplete: false, failure: nil) }
        producer.start()
        #expect(buffer.waitForInput(until: .now.advanced(by: .seconds(60))))
        #expect(read(buffer, upTo: 8).bytes == Array("r".utf8))
    }

    @Test func closingIsIdempotentEndsReadsAndWaitsAndReleasesThePipe() throws {
        let buffer = try makeOpenBuffer()
        #expect(buffer.descriptor >= 0)
        #expect(buffer.close())
        #expect(!buffer.close())
        #expect(buffer.descriptor == -1)
        #expect(buffer.currentPhase == .closed)
        #expect(!buffer.deliver(Array("late".utf8), isComplete: false, failure: nil))
        #expect(buffer.waitForInput(until: .now))
        #expect(read(buffer, upTo: 64).progress == .endOfStream)
    }
}

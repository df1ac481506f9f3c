#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// A connected socket with its reply decoder: what the I/O thread lends to one caller at a time while the
/// connection is idle, so that caller can write its request and read the reply on its own thread.
///
/// Who may touch it: the I/O thread while it owns the connection; a caller between taking it from
/// ``ConnectionCore/State/parked`` and giving it back (``ConnectionCore/State/parked`` again or a
/// ``ConnectionCore/Handoff``). Both moves happen under the core's lock.
///
/// `@unchecked Sendable` is sound: exactly one thread owns a session at any time, and ownership only changes
/// under ConnectionCore's lock (taking `parked`, setting `parked` or `handoff`), whose release and acquire
/// order every access of the previous owner before every access of the next.
final class SocketSession: @unchecked Sendable {
    var socket: Transport?
    var decoder: RESPDecoder
    var lastActivity = ContinuousClock.now
    /// Request bytes of an inline exchange; reused so a request costs no allocation once warm.
    var output: [UInt8] = []
    /// The receive buffer of inline exchanges (the I/O thread has its own).
    var readChunk = [UInt8](repeating: 0, count: 16 << 10)
    /// System calls made by inline exchanges since the owner last published them.
    var systemCalls = 0

    init(limits: RESPDecoder.Limits) {
        decoder = RESPDecoder(limits: limits)
    }

    /// How an inline exchange ended.
    enum InlineOutcome {
        /// The reply, read on the caller's thread.
        case reply(RESPValue)
        /// Not finished within the wait: `unwritten` request bytes remain (empty once all were sent,
        /// then `writtenAt` is when the last byte went out); the I/O thread takes over.
        case unfinished(unwritten: ArraySlice<UInt8>, writtenAt: ContinuousClock.Instant?)
        /// The socket or the reply stream failed; the I/O thread drops the connection with this error.
        case failed(ConnectionError, unwritten: ArraySlice<UInt8>, writtenAt: ContinuousClock.Instant?)
    }

    /// Writes `command` and waits up to `wait` for its reply, yielding the processor between reads.
    ///
    /// Never blocks in the kernel: sends and reads are non-blocking, and while no reply is there the
    /// thread calls `sched_yield()` so a server sharing its core can answer. Must be called only while
    /// nothing else is in flight on the socket (the first reply is this request's).
    func exchange(_ command: RESPCommand, wait: Duration) -> InlineOutcome {
        let writtenAt: ContinuousClock.Instant
        switch write(command) {
        case .ended(let outcome): return outcome
        case .written(let instant): writtenAt = instant
        }
        let giveUpAt = writtenAt.advanced(by: wait)
        while true {
            if let outcome = poll(writtenAt: writtenAt) { return outcome }
            if ContinuousClock.now >= giveUpAt { return .unfinished(unwritten: [], writtenAt: writtenAt) }
            sched_yield()
        }
    }

    /// How writing an inline request went.
    enum WriteOutcome {
        /// Every byte went out at this instant; the reply is to be polled for.
        case written(ContinuousClock.Instant)
        /// The write could not finish: the exchange ends here with this outcome.
        case ended(InlineOutcome)
    }

    /// The first half of ``exchange(_:wait:)``: writes `command` without blocking. Must be called only while
    /// nothing else is in flight on the socket.
    func write(_ command: RESPCommand) -> WriteOutcome {
        guard let socket else {
            return .ended(
                .failed(ConnectionError(.connectionClosed, "the connection was closed"), unwritten: [], writtenAt: nil))
        }
        output.removeAll(keepingCapacity: output.capacity <= 1 << 20)
        RESPEncoder.encode(command, into: &output)
        var written = 0
        while written < output.count {
            let progress = output.withUnsafeBytes { socket.write(UnsafeRawBufferPointer(rebasing: $0[written...])) }
            systemCalls += 1
            switch progress {
            case .bytes(let count):
                written += count
            case .wouldBlock:
                return .ended(.unfinished(unwritten: output[written...], writtenAt: nil))
            case .endOfStream, .failed:
                return .ended(
                    .failed(
                        ConnectionError(.connectionClosed, "the connection failed while writing"),
                        unwritten: output[written...], writtenAt: nil))
            }
        }
        return .written(ContinuousClock.now)
    }

    /// The second half of ``exchange(_:wait:)``: reads what has arrived without blocking and returns how the
    /// exchange ended, or `nil` while its reply has not arrived yet.
    ///
    /// - Parameter writtenAt: When the request's last byte went out (the read deadline counts from it).
    func poll(writtenAt: ContinuousClock.Instant) -> InlineOutcome? {
        guard let socket else {
            return .failed(
                ConnectionError(.connectionClosed, "the connection was closed"), unwritten: [], writtenAt: writtenAt)
        }
        while true {
            do throws(ConnectionError) {
                while let reply = try decoder.next() {
                    // Pushes only come with tracking or pub/sub, and connections with a push handler never
                    // lend their socket; one arriving here has no reader.
                    if case .push = reply { continue }
                    return .reply(reply)
                }
            } catch {
                return .failed(error, unwritten: [], writtenAt: writtenAt)
            }
            let progress = readChunk.withUnsafeMutableBytes { socket.read(into: $0) }
            systemCalls += 1
            switch progress {
            case .bytes(let count):
                lastActivity = .now
                decoder.append(readChunk[0..<count])
            case .wouldBlock:
                return nil
            case .endOfStream, .failed:
                return .failed(
                    ConnectionError(.connectionClosed, "the server closed the connection"), unwritten: [],
                    writtenAt: writtenAt)
            }
        }
    }
}

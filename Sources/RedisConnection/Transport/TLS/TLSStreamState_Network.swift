#if canImport(Network)
import Foundation
import Network

#if canImport(Darwin)
import Darwin
#endif

/// What one Network.framework connection shares between its dispatch queue (state changes, received bytes,
/// send completions) and the thread that owns the ``TLSStream``: the decrypted bytes not yet read, how far the
/// connection got, and a readiness pipe whose read end `poll(2)` waits on in place of a socket.
///
/// The pipe holds one byte exactly while a read would not block (bytes are buffered, or the connection
/// ended); once the connection has ended its write end is closed too, so a poll for a hang-up alone (the I/O
/// thread's parked connection) sees `POLLHUP`. Received bytes are buffered up to ``receiveLimit``; beyond it
/// no receive is outstanding until the reader has taken some, so a reply the caller is slow to read stays in
/// the kernel, as on the socket path.
///
/// Thread safety: every mutable property is guarded by `condition`; ``connection`` is immutable and
/// Network.framework's connection methods may be called from any thread.
final class TLSStreamState: @unchecked Sendable {
    // @unchecked Sendable is sound: the mutable state below is read and written only between
    // `condition.lock()` and `condition.unlock()`; `connection` is a `let`, and NWConnection serializes its
    // work on its own queue, so calling it from the owning thread and from its completions is safe.

    /// How far the connection got.
    enum Phase {
        /// Connecting and shaking hands.
        case connecting
        /// Ready: bytes flow.
        case open
        /// Failed, or waiting for a better network, before it was ready.
        case refused(NWError)
        /// The server closed its side after the connection was ready.
        case ended
        /// The connection failed after it was ready, with this `errno`-style code.
        case broken(Int32)
        /// Closed by this process.
        case closed
    }

    /// Buffered bytes beyond which no more are received until the reader takes some.
    static let receiveLimit = 1 << 20
    /// The most bytes one receive delivers.
    private static let receiveChunk = 64 << 10

    let connection: NWConnection
    private let condition = NSCondition()
    private var phase = Phase.connecting
    private var received: [UInt8] = []
    private var consumed = 0
    private var receiving = false
    private var readEnd: Int32
    private var writeEnd: Int32
    private var signalled = false

    /// Wraps `connection` (not yet started); `nil` when the process is out of descriptors for the pipe.
    init?(connection: NWConnection) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
        self.connection = connection
    }

    deinit {
        if readEnd >= 0 { _ = Darwin.close(readEnd) }
        if writeEnd >= 0 { _ = Darwin.close(writeEnd) }
    }

    // MARK: - Establishing

    /// Starts the connection on `queue`, following its state from there.
    func start(on queue: DispatchQueue) {
        connection.stateUpdateHandler = { [self] state in update(state) }
        connection.start(queue: queue)
    }

    /// Waits until the connection is ready or refused, or `deadline` passes.
    ///
    /// - Returns: The phase reached: still ``Phase/connecting`` on the deadline.
    func awaitEstablished(until deadline: ContinuousClock.Instant) -> Phase {
        withLock {
            while case .connecting = phase {
                guard wait(until: deadline) else { break }
            }
            return phase
        }
    }

    /// Starts receiving (once the connection is ready).
    func beginReceiving() {
        withLock { receiving = true }
        receiveNext()
    }

    private func update(_ state: NWConnection.State) {
        withLock {
            switch (phase, state) {
            case (.connecting, .ready):
                phase = .open
            case (.connecting, .waiting(let error)), (.connecting, .failed(let error)):
                phase = .refused(error)
            case (.connecting, .cancelled):
                phase = .refused(.posix(.ECANCELED))
            case (.open, .failed(let error)), (.open, .waiting(let error)):
                end(.broken(Self.code(of: error)))
            case (.open, .cancelled):
                end(.broken(ECANCELED))
            default:
                return
            }
            condition.broadcast()
        }
    }

    // MARK: - Reading

    private func receiveNext() {
        connection.receive(minimumIncompleteLength: 1, maximumLength: Self.receiveChunk) {
            [self] data, _, isComplete, error in
            if deliver(data, isComplete: isComplete, error: error) { receiveNext() }
        }
    }

    /// Buffers what a receive brought; `true` when the next receive should be issued now.
    private func deliver(_ data: Data?, isComplete: Bool, error: NWError?) -> Bool {
        withLock {
            guard case .open = phase else {
                receiving = false
                return false
            }
            if let data, !data.isEmpty {
                if consumed > 0 {
                    received.removeFirst(consumed)
                    consumed = 0
                }
                received.append(contentsOf: data)
            }
            if let error {
                end(.broken(Self.code(of: error)))
            } else if isComplete {
                end(.ended)
            } else if received.count > consumed {
                signal()
            }
            condition.broadcast()
            receiving = isOpen && received.count - consumed < Self.receiveLimit
            return receiving
        }
    }

    /// Copies buffered bytes into `buffer`; after the last buffered byte, how the connection ended.
    ///
    /// - Returns: What the read did, and whether the caller must call ``resumeReceiving()`` (the buffer fell
    ///   below its limit while no receive was outstanding).
    func take(into buffer: UnsafeMutableRawBufferPointer) -> (Socket.Progress, resume: Bool) {
        withLock {
            let available = received.count - consumed
            guard available == 0 else {
                let count = min(available, buffer.count)
                received.withUnsafeBytes { bytes in
                    buffer.baseAddress?.copyMemory(from: bytes.baseAddress! + consumed, byteCount: count)
                }
                consumed += count
                if consumed == received.count {
                    received.removeAll(keepingCapacity: received.capacity <= Self.receiveLimit)
                    consumed = 0
                }
                settle()
                let resume = !receiving && isOpen && received.count - consumed < Self.receiveLimit
                if resume { receiving = true }
                return (.bytes(count), resume)
            }
            switch phase {
            case .connecting, .open:
                settle()
                return (.wouldBlock, false)
            case .ended, .closed: return (.endOfStream, false)
            case .broken(let code): return (.failed(code), false)
            case .refused: return (.failed(ECONNREFUSED), false)
            }
        }
    }

    /// Issues the next receive after ``take(into:)`` asked for it.
    func resumeReceiving() {
        receiveNext()
    }

    /// Whether a read returns without waiting: bytes are buffered, or the connection ended.
    var hasInput: Bool {
        withLock { received.count > consumed || !isOpen }
    }

    /// Waits until a read returns without waiting or `deadline` passes; `false` on the deadline.
    func waitForInput(until deadline: ContinuousClock.Instant) -> Bool {
        withLock {
            while received.count == consumed, isOpen {
                guard wait(until: deadline) else { return false }
            }
            return true
        }
    }

    /// The readiness pipe's read end, to `poll(2)`; -1 once closed.
    var descriptor: Int32 {
        withLock { readEnd }
    }

    // MARK: - Writing

    /// Hands `bytes` to the connection, which queues them: a write never blocks. A server that stops reading
    /// is caught by the read deadline, which starts when the bytes are handed over.
    func send(_ bytes: UnsafeRawBufferPointer) -> Socket.Progress {
        let current = withLock { phase }
        switch current {
        case .open: break
        case .broken(let code): return .failed(code)
        default: return .failed(EPIPE)
        }
        connection.send(
            content: Data(bytes),
            completion: .contentProcessed { [self] error in
                guard let error else { return }
                withLock {
                    guard case .open = phase else { return }
                    end(.broken(Self.code(of: error)))
                    condition.broadcast()
                }
            })
        return .bytes(bytes.count)
    }

    // MARK: - Closing

    /// Cancels the connection (Network.framework closes TLS and TCP gracefully) and closes the pipe. Idempotent.
    func shutDown() {
        let wasClosed = withLock {
            if case .closed = phase { return true }
            phase = .closed
            closeWriteEnd()
            if readEnd >= 0 { _ = Darwin.close(readEnd) }
            readEnd = -1
            condition.broadcast()
            return false
        }
        guard !wasClosed else { return }
        // Nothing may call back into this object once it is closed; the handler also held it alive.
        connection.stateUpdateHandler = nil
        connection.cancel()
    }

    // MARK: - Helpers (the lock is held)

    private func withLock<Result>(_ body: () -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    private var isOpen: Bool {
        if case .open = phase { return true }
        return false
    }

    /// Waits on the condition until `deadline`; `false` once it has passed. The lock is held.
    ///
    /// `NSCondition` waits until a wall-clock date; waiting at most 100 ms at a time and judging the deadline
    /// on the continuous clock keeps a wall-clock jump from stretching the wait past the deadline.
    private func wait(until deadline: ContinuousClock.Instant) -> Bool {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return false }
        let (seconds, attoseconds) = min(left, .milliseconds(100)).components
        _ = condition.wait(until: Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18))
        return true
    }

    /// Ends an open connection: the pipe becomes readable for good and reports a hang-up. The lock is held.
    private func end(_ outcome: Phase) {
        phase = outcome
        signal()
        closeWriteEnd()
    }

    /// Puts the one readiness byte in the pipe unless it is there. The lock is held.
    private func signal() {
        guard !signalled, writeEnd >= 0 else { return }
        var byte: UInt8 = 1
        if write(writeEnd, &byte, 1) == 1 { signalled = true }
    }

    /// Takes the readiness byte out once a read would block again. The lock is held.
    private func settle() {
        guard signalled, received.count == consumed, isOpen, readEnd >= 0 else { return }
        var byte: UInt8 = 0
        if read(readEnd, &byte, 1) == 1 { signalled = false }
    }

    private func closeWriteEnd() {
        guard writeEnd >= 0 else { return }
        _ = Darwin.close(writeEnd)
        writeEnd = -1
    }

    /// An `errno`-style code for a failure after the connection was ready.
    private static func code(of error: NWError) -> Int32 {
        switch error {
        case .posix(let code): code.rawValue
        case .dns, .tls: EPROTO
        @unknown default: EPROTO
        }
    }
}
#endif  // canImport(Network): Network.framework on Apple platforms

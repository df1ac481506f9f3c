#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// Bridges a byte stream that delivers by callback (Network.framework's `NWConnection`) to the connection
/// loop's non-blocking reads and `poll(2)`: received bytes wait here, a read takes them or answers
/// ``Socket/Progress/wouldBlock``, and ``descriptor`` is a pipe that `poll(2)` sees readable exactly while a
/// read would not block.
///
/// The pipe holds one byte while bytes are buffered or the stream has ended; once it has ended the pipe's
/// write end is closed as well, so a poll for a hang-up alone (the I/O thread's parked connection) reports
/// `POLLHUP`. At most ``receiveLimit`` bytes are buffered: a delivery that reaches it tells the producer to
/// stop, and the read that brings the buffer back under it tells the reader to resume the producer, so a
/// reply the caller is slow to read waits in the kernel, as on the socket path. Platform-free, so its rules
/// are tested on Linux although only the Apple back end uses it (`TLSStreamState_Network.swift`).
///
/// Thread safety: every method may be called from any thread; the state is guarded by one `ConditionLock` (`NSCondition`'s operations),
/// which the waits also use. Deliveries come from the producer's queue, reads and waits from the one thread
/// that owns the stream.
///
/// `@unchecked Sendable` is sound: every stored `var` is read and written only between `condition.lock()`
/// and `condition.unlock()` (`withLock`), except in `init` and `deinit`, when no other thread holds the
/// object; the only `let`s are the condition itself and a constant.
package final class ReadinessBuffer: @unchecked Sendable {

    /// How far the stream got.
    package enum Phase: Equatable, Sendable {
        /// Connecting and shaking hands.
        case connecting
        /// Ready: bytes flow.
        case open
        /// It failed before it was ready (the producer keeps the reason).
        case refused
        /// The peer closed its side after it was ready.
        case ended
        /// It failed after it was ready, with this `errno`-style code.
        case broken(Int32)
        /// Closed by this process.
        case closed
    }

    /// Buffered bytes at which receiving pauses until the reader takes some: 1 MiB.
    package let receiveLimit: Int

    private let condition = ConditionLock()
    private var phase = Phase.connecting
    private var received: [UInt8] = []
    private var consumed = 0
    private var receiving = false
    private var readEnd: Int32
    private var writeEnd: Int32
    private var signalled = false

    /// Opens the readiness pipe (non-blocking, close-on-exec); `nil` when the process is out of descriptors.
    ///
    /// - Parameter receiveLimit: Buffered bytes at which receiving pauses; at least 1.
    package init?(receiveLimit: Int = 1 << 20) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
        self.receiveLimit = max(1, receiveLimit)
    }

    deinit {
        closeDescriptor(readEnd)
        closeDescriptor(writeEnd)
    }

    // MARK: - The producer's side

    /// The stream is ready; wakes ``awaitEstablished(until:)``. Ignored unless still connecting.
    package func markOpen() { transition(from: .connecting, to: .open) }

    /// The stream failed before it was ready; wakes ``awaitEstablished(until:)``. Ignored unless connecting.
    package func markRefused() { transition(from: .connecting, to: .refused) }

    /// The stream failed after it was ready: reads report `code` once the buffer is empty. Ignored unless open.
    package func markBroken(_ code: Int32) { transition(from: .open, to: .broken(code)) }

    /// The producer starts receiving (the first receive is about to be issued).
    package func beginReceiving() {
        withLock { receiving = true }
    }

    /// Buffers what one receive brought.
    ///
    /// - Parameters:
    ///   - bytes: The bytes received (may be empty).
    ///   - isComplete: The peer closed its side: reads report the end once the buffer is empty.
    ///   - failure: An `errno`-style code when the receive failed, or `nil`.
    /// - Returns: Whether the producer should issue the next receive now; `false` once the stream has ended or
    ///   is closed, or the buffer reached ``receiveLimit`` (``take(into:)`` then asks for it).
    /// - Complexity: O(*n*) in the bytes buffered when earlier ones were read since the last delivery.
    package func deliver(_ bytes: some Collection<UInt8>, isComplete: Bool, failure: Int32?) -> Bool {
        withLock {
            guard phase == .open else {
                receiving = false
                return false
            }
            if !bytes.isEmpty {
                if consumed > 0 {
                    received.removeFirst(consumed)
                    consumed = 0
                }
                received.append(contentsOf: bytes)
            }
            if let failure {
                end(.broken(failure))
            } else if isComplete {
                end(.ended)
            } else if received.count > consumed {
                signal()
            }
            condition.broadcast()
            receiving = phase == .open && received.count - consumed < receiveLimit
            return receiving
        }
    }

    // MARK: - The reader's side

    /// Waits until the stream is ready or refused, or `deadline` passes.
    ///
    /// - Returns: The phase reached: still ``Phase/connecting`` on the deadline.
    package func awaitEstablished(until deadline: ContinuousClock.Instant) -> Phase {
        withLock {
            while phase == .connecting {
                guard wait(until: deadline) else { break }
            }
            return phase
        }
    }

    /// The current phase.
    package var currentPhase: Phase {
        withLock { phase }
    }

    /// Copies buffered bytes into `buffer`; once none are left, how the stream ended.
    ///
    /// - Returns: What the read did, and whether the caller must issue the producer's next receive (the
    ///   buffer fell below ``receiveLimit`` while none was outstanding).
    package func take(into buffer: UnsafeMutableRawBufferPointer) -> (progress: Socket.Progress, resume: Bool) {
        withLock {
            let available = received.count - consumed
            if available > 0, !buffer.isEmpty {
                let count = min(available, buffer.count)
                received.withUnsafeBytes { bytes in
                    buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[consumed..<consumed + count]))
                }
                consumed += count
                if consumed == received.count {
                    received.removeAll(keepingCapacity: received.capacity <= receiveLimit)
                    consumed = 0
                }
                settle()
                let resume = !receiving && phase == .open && received.count - consumed < receiveLimit
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

    /// Whether a read returns without waiting: bytes are buffered, or the stream is no longer open.
    package var hasInput: Bool {
        withLock { received.count > consumed || (phase != .open && phase != .connecting) }
    }

    /// Waits until a read returns without waiting or `deadline` passes; `false` on the deadline.
    package func waitForInput(until deadline: ContinuousClock.Instant) -> Bool {
        withLock {
            while received.count == consumed, phase == .open || phase == .connecting {
                guard wait(until: deadline) else { return false }
            }
            return true
        }
    }

    /// The readiness pipe's read end, to `poll(2)`; -1 once closed.
    package var descriptor: Int32 {
        withLock { readEnd }
    }

    /// Marks the stream closed by this process, wakes every waiter and closes the pipe.
    ///
    /// - Returns: `false` when it was closed already (the caller's own teardown runs once).
    package func close() -> Bool {
        withLock {
            guard phase != .closed else { return false }
            phase = .closed
            closeWriteEnd()
            closeDescriptor(readEnd)
            readEnd = -1
            condition.broadcast()
            return true
        }
    }

    // MARK: - Helpers (the lock is held)

    private func withLock<Result>(_ body: () -> Result) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    private func transition(from expected: Phase, to next: Phase) {
        withLock {
            guard phase == expected else { return }
            if expected == .open {
                end(next)
            } else {
                phase = next
            }
            condition.broadcast()
        }
    }

    /// Waits on the condition until `deadline`; `false` once it has passed. The lock is held.
    ///
    /// The condition waits until a wall-clock time; waiting at most 100 ms at a time and judging the deadline
    /// on the continuous clock keeps a wall-clock jump from stretching the wait past the deadline.
    private func wait(until deadline: ContinuousClock.Instant) -> Bool {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return false }
        condition.wait(atMost: min(left, .milliseconds(100)))
        return true
    }

    /// Ends an open stream: the pipe becomes readable for good and reports a hang-up. The lock is held.
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
        guard signalled, received.count == consumed, phase == .open, readEnd >= 0 else { return }
        var byte: UInt8 = 0
        if read(readEnd, &byte, 1) == 1 { signalled = false }
    }

    private func closeWriteEnd() {
        closeDescriptor(writeEnd)
        writeEnd = -1
    }
}

private func closeDescriptor(_ descriptor: Int32) {
    guard descriptor >= 0 else { return }
    #if canImport(Darwin)
    _ = Darwin.close(descriptor)
    #else
    _ = Glibc.close(descriptor)
    #endif
}

#if canImport(Network)
import CacheCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Network

#if canImport(Darwin)
import Darwin
#endif

/// One Network.framework connection with the ``ReadinessBuffer`` its receives fill: what the connection's
/// dispatch queue (state changes, receive and send completions) shares with the thread that owns the
/// ``TLSStream``.
///
/// Thread safety: ``connection`` is immutable and Network.framework serializes a connection's work on its
/// queue, so its methods may be called from the owning thread and from its completions; the buffer and
/// ``refusal`` have their own locks.
///
/// `@unchecked Sendable` is sound: the three stored properties are `let`s of types safe to share: the
/// lock-guarded ``ReadinessBuffer``, a `Locked` of a `Sendable` error, and `NWConnection`, which the SDK does
/// not declare `Sendable` but whose methods may be called from any thread (its work runs on its own queue).
final class TLSStreamState: @unchecked Sendable {
    /// The most bytes one receive delivers.
    private static let receiveChunk = 64 << 10

    let connection: NWConnection
    let buffer: ReadinessBuffer
    /// Why the connection failed before it was ready.
    let refusal = Locked<NWError?>(nil)

    /// Wraps `connection` (not yet started); `nil` when the process is out of descriptors for the pipe.
    init?(connection: NWConnection) {
        guard let buffer = ReadinessBuffer() else { return nil }
        self.connection = connection
        self.buffer = buffer
    }

    /// Starts the connection on `queue`, following its state from there.
    func start(on queue: DispatchQueue) {
        connection.stateUpdateHandler = { [self] state in update(state) }
        connection.start(queue: queue)
    }

    /// Starts receiving (once the connection is ready).
    func beginReceiving() {
        buffer.beginReceiving()
        receiveNext()
    }

    /// Issues the next receive; each completion issues the one after it until the buffer says to pause.
    func receiveNext() {
        connection.receive(minimumIncompleteLength: 1, maximumLength: Self.receiveChunk) {
            [self] data, _, isComplete, error in
            let more = buffer.deliver(data ?? Data(), isComplete: isComplete, failure: error.map(Self.code(of:)))
            if more { receiveNext() }
        }
    }

    private func update(_ state: NWConnection.State) {
        switch state {
        case .ready:
            buffer.markOpen()
        case .waiting(let error), .failed(let error):
            // Waiting (no route now) is a failure too: a cache does not wait for a better network.
            if buffer.currentPhase == .connecting { refusal.withLock { $0 = $0 ?? error } }
            buffer.markRefused()
            buffer.markBroken(Self.code(of: error))
        case .cancelled:
            buffer.markRefused()
            buffer.markBroken(ECANCELED)
        default:
            break
        }
    }

    /// Hands `bytes` to the connection, which queues them: a write never blocks. A server that stops reading
    /// is caught by the read deadline, which starts when the bytes are handed over.
    func send(_ bytes: UnsafeRawBufferPointer) -> Socket.Progress {
        switch buffer.currentPhase {
        case .open: break
        case .broken(let code): return .failed(code)
        default: return .failed(EPIPE)
        }
        connection.send(
            content: Data(bytes),
            completion: .contentProcessed { [buffer] error in
                if let error { buffer.markBroken(Self.code(of: error)) }
            })
        return .bytes(bytes.count)
    }

    /// Closes the buffer and cancels the connection (Network.framework closes TLS and TCP gracefully).
    /// Idempotent.
    func shutDown() {
        guard buffer.close() else { return }
        // Nothing may call back into this object once it is closed; the handler also held it alive.
        connection.stateUpdateHandler = nil
        connection.cancel()
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

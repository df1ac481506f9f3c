#if canImport(Network)
import CacheCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Network
import Security

#if canImport(Darwin)
import Darwin
#endif

/// One TLS connection through Network.framework (`NWConnection` with TLS options), bridged to the
/// connection loop's non-blocking reads and writes: received bytes wait in a buffer, a read takes what is
/// there or reports ``Socket/Progress/wouldBlock``, and ``descriptor`` is a pipe that `poll(2)` sees readable
/// while a read would not block (``ReadinessBuffer``, filled by ``TLSStreamState``).
///
/// Network.framework opens its own TCP connection, so this back end connects itself rather than run over a
/// ``Socket``. The connection runs on a private serial queue; no thread of the caller waits anywhere but in
/// `poll(2)` or on a condition bounded by the operation's deadline.
///
/// Thread safety: not thread-safe, like ``Socket``; used by one thread at a time. What it shares with the
/// connection's queue lives in ``TLSStreamState``, behind the locks of its parts.
package final class TLSStream {
    private let state: TLSStreamState

    private init(state: TLSStreamState) {
        self.state = state
    }

    deinit {
        state.shutDown()
    }

    /// Connects to `host:port`, runs the handshake and verifies the server, all before `deadline`.
    ///
    /// Nothing is sent on the connection before this returns, so no password crosses an unverified link.
    ///
    /// - Parameters:
    ///   - host: Host name or address; also the name verified, and sent as SNI for a name, unless the context
    ///     names another.
    ///   - port: TCP port.
    ///   - context: Trust, name, verification switch.
    ///   - deadline: When connecting and the handshake together must be done.
    /// - Returns: A verified stream.
    /// - Throws: ``ConnectionError`` `.certificateRejected` with Security's reason (another CA, expired, a name
    ///   mismatch), `.deadlineExceeded` when the connection is not ready in time (the connection is
    ///   cancelled), `.connectFailed` for a name that does not resolve, a refused or unreachable address, or
    ///   an invalid port, `.tlsFailed` for any other handshake failure (a plaintext server, no common version).
    static func connect(
        host: String, port: Int, context: TLSContext, deadline: ContinuousClock.Instant
    ) throws(ConnectionError) -> TLSStream {
        guard let number = UInt16(exactly: port), number > 0, let endpointPort = NWEndpoint.Port(rawValue: number)
        else { throw ConnectionError(.connectFailed, "invalid port \(port) for \(host)") }
        let name = context.serverName ?? host
        // The same rule as the OpenSSL back end, where a C string would cut the name at a NUL byte.
        guard !name.isEmpty, !name.utf8.contains(0) else {
            throw ConnectionError(.tlsFailed, "cannot verify against an empty name or one containing a NUL byte")
        }
        let rejection = Locked<String?>(nil)
        let queue = DispatchQueue(label: "strata.redis-tls")
        let tcp = NWProtocolTCP.Options()
        tcp.noDelay = true
        let parameters = NWParameters(
            tls: context.makeOptions(name: name, rejection: rejection, queue: queue), tcp: tcp)
        let connection = NWConnection(host: NWEndpoint.Host(host), port: endpointPort, using: parameters)
        guard let state = TLSStreamState(connection: connection) else {
            throw ConnectionError(.connectFailed, "cannot create the TLS readiness pipe (out of descriptors?)")
        }
        state.start(on: queue)
        switch state.buffer.awaitEstablished(until: deadline) {
        case .connecting:
            state.shutDown()
            throw ConnectionError(.deadlineExceeded, "connecting to \(host):\(port) over TLS missed its deadline")
        case .refused:
            state.shutDown()
            throw Self.failure(
                state.refusal.withLock { $0 } ?? .posix(.ECONNABORTED), rejection: rejection.withLock { $0 },
                address: "\(host):\(port)", name: name)
        case .open, .ended, .broken, .closed:
            // Ready, even if it ended since: reads report that end, as on a socket.
            state.beginReceiving()
            return TLSStream(state: state)
        }
    }

    /// The typed error for a connection that failed before it was ready.
    private static func failure(
        _ error: NWError, rejection: String?, address: String, name: String
    ) -> ConnectionError {
        if let rejection {
            return ConnectionError(
                .certificateRejected, "the server's certificate was rejected for \(name): \(rejection)")
        }
        switch error {
        case .dns(let code):
            return ConnectionError(.connectFailed, "cannot resolve \(address) (DNS service error \(code))")
        case .posix(let code):
            switch code {
            case .ECONNREFUSED, .ENETUNREACH, .EHOSTUNREACH, .ENETDOWN, .EHOSTDOWN, .ETIMEDOUT:
                return ConnectionError(.connectFailed, "connect to \(address) failed: \(code)")
            default:
                return ConnectionError(
                    .tlsFailed,
                    "the server closed the connection during the TLS handshake (not a TLS port?): \(code)")
            }
        case .tls(let status):
            let reason = SecCopyErrorMessageString(status, nil).map { $0 as String } ?? "no detail"
            return ConnectionError(.tlsFailed, "the TLS handshake with \(name) failed: \(reason) (OSStatus \(status))")
        @unknown default:
            return ConnectionError(.tlsFailed, "the TLS connection to \(address) failed: \(error)")
        }
    }

    /// The readiness pipe to `poll(2)`: readable while a read would not block; `POLLHUP` once the connection
    /// has ended.
    var descriptor: Int32 { state.buffer.descriptor }

    /// Whether a read returns without waiting (bytes are buffered, or the connection ended).
    var hasBufferedInput: Bool { state.buffer.hasInput }

    /// Waits until a read (or write) can make progress or `deadline` passes; `false` on the deadline. Writes
    /// never wait: the connection queues what it is given.
    func wait(forWriting: Bool, until deadline: ContinuousClock.Instant) -> Bool {
        forWriting || state.buffer.waitForInput(until: deadline)
    }

    /// Reads buffered decrypted bytes into `buffer`; `.wouldBlock` while none have arrived.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Socket.Progress {
        let (progress, resume) = state.buffer.take(into: buffer)
        if resume { state.receiveNext() }
        return progress
    }

    /// Hands all of `bytes` to the connection (copied), or reports how it failed.
    func write(_ bytes: UnsafeRawBufferPointer) -> Socket.Progress {
        guard !bytes.isEmpty else { return .bytes(0) }
        return state.send(bytes)
    }

    /// Cancels the connection (TLS `close_notify`, then TCP close, by Network.framework) and frees the pipe.
    func close() {
        state.shutDown()
    }
}
#endif  // canImport(Network): Network.framework on Apple platforms

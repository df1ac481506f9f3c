/// The byte stream under a Redis connection: a plain TCP socket, or TLS over one.
///
/// Everything above this type — the I/O thread, inline exchanges, the handshake, the tracking listener —
/// reads and writes through it and polls its ``descriptor``, so a connection, a listener (and later a
/// cluster node) get TLS without a code path of their own. An enum rather than a protocol: the plaintext
/// path pays one `switch`, no existential dispatch or allocation (Docs/Performance.md, "The Redis tier").
///
/// Thread safety: not thread-safe; a transport is used by one thread at a time (the I/O thread, or a
/// caller that borrowed the idle connection under the connection's lock).
package enum Transport {
    /// Plain TCP.
    case plain(Socket)
    /// TLS over TCP (Linux: the system OpenSSL's `libssl`; Apple platforms: Network.framework).
    case tls(TLSStream)

    /// Connects to `host:port` and, when `tls` is given, runs the TLS handshake, all before `deadline`.
    ///
    /// - Parameters:
    ///   - host: Host name or address; with TLS also the name verified and sent as SNI, unless the context
    ///     names another.
    ///   - port: TCP port.
    ///   - tls: The TLS settings, or `nil` for plain TCP.
    ///   - deadline: When connecting and the handshake together must be done.
    /// - Returns: A connected (and, with TLS, verified) transport.
    /// - Throws: ``ConnectionError`` `.connectFailed` (resolution or `connect(2)`), `.deadlineExceeded`
    ///   (the connect or handshake did not finish in time), `.certificateRejected` (the server's certificate
    ///   failed verification), `.tlsFailed` (any other handshake failure, such as a plaintext server).
    package static func connect(
        host: String, port: Int, tls: TLSContext?, deadline: ContinuousClock.Instant
    ) throws(ConnectionError) -> Transport {
        guard let tls else { return .plain(try Socket.connect(host: host, port: port, deadline: deadline)) }
        // The back end connects: OpenSSL runs over a socket of ours, Network.framework opens its own.
        return .tls(try TLSStream.connect(host: host, port: port, context: tls, deadline: deadline))
    }

    /// The descriptor to `poll(2)`: readable when a read would not block (with Network.framework's TLS, the
    /// stream's own readiness pipe rather than a socket; it reports a hang-up as `POLLHUP`).
    package var descriptor: Int32 {
        switch self {
        case .plain(let socket): socket.descriptor
        case .tls(let stream): stream.descriptor
        }
    }

    /// Reads what is available into `buffer` (with TLS: decrypted bytes).
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> Socket.Progress {
        switch self {
        case .plain(let socket): socket.read(into: buffer)
        case .tls(let stream): stream.read(into: buffer)
        }
    }

    /// Writes what the transport takes of `bytes` now.
    ///
    /// After `.wouldBlock` the caller must offer the same bytes again (more may follow them; the buffer may
    /// have moved), as TLS requires of a repeated `SSL_write`.
    package func write(_ bytes: UnsafeRawBufferPointer) -> Socket.Progress {
        switch self {
        case .plain(let socket): socket.write(bytes)
        case .tls(let stream): stream.write(bytes)
        }
    }

    /// Whether a read returns bytes now although `poll(2)` may not report the descriptor readable: TLS
    /// decrypts a whole record and may hold the part a short buffer did not take. A reader checks it before
    /// it polls.
    package var hasBufferedInput: Bool {
        switch self {
        case .plain: false
        case .tls(let stream): stream.hasBufferedInput
        }
    }

    /// Waits until the transport is writable (or readable) or `deadline` passes; `false` on the deadline.
    package func wait(forWriting: Bool, until deadline: ContinuousClock.Instant) -> Bool {
        switch self {
        case .plain(let socket): socket.wait(forWriting: forWriting, until: deadline)
        case .tls(let stream): stream.wait(forWriting: forWriting, until: deadline)
        }
    }

    /// Closes the transport (with TLS: sends `close_notify` if the socket takes it, frees the session).
    package func close() {
        switch self {
        case .plain(let socket): socket.close()
        case .tls(let stream): stream.close()
        }
    }
}

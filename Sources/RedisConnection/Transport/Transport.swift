/// The byte stream under a Redis connection: today a plain TCP socket.
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

    /// Connects to `host:port` before `deadline`.
    ///
    /// - Parameters:
    ///   - host: Host name or address.
    ///   - port: TCP port.
    ///   - deadline: When connecting must be done.
    /// - Returns: A connected transport.
    /// - Throws: ``ConnectionError`` `.connectFailed` (resolution or `connect(2)`), `.deadlineExceeded`
    ///   (the connect did not finish in time).
    package static func connect(
        host: String, port: Int, deadline: ContinuousClock.Instant
    ) throws(ConnectionError) -> Transport {
        .plain(try Socket.connect(host: host, port: port, deadline: deadline))
    }

    /// The descriptor to `poll(2)`.
    package var descriptor: Int32 {
        switch self {
        case .plain(let socket): socket.descriptor
        }
    }

    /// Reads what is available into `buffer`.
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> Socket.Progress {
        switch self {
        case .plain(let socket): socket.read(into: buffer)
        }
    }

    /// Writes what the transport takes of `bytes` now.
    ///
    /// After `.wouldBlock` the caller must offer the same bytes again (more may follow them; the buffer may
    /// have moved), as a stream that encrypts requires.
    package func write(_ bytes: UnsafeRawBufferPointer) -> Socket.Progress {
        switch self {
        case .plain(let socket): socket.write(bytes)
        }
    }

    /// Whether a read returns bytes now although `poll(2)` may not report the descriptor readable (a
    /// stream that decrypts whole records can hold the rest of one); a reader checks it before it polls.
    package var hasBufferedInput: Bool {
        switch self {
        case .plain: false
        }
    }

    /// Waits until the transport is writable (or readable) or `deadline` passes; `false` on the deadline.
    package func wait(forWriting: Bool, until deadline: ContinuousClock.Instant) -> Bool {
        switch self {
        case .plain(let socket): socket.wait(forWriting: forWriting, until: deadline)
        }
    }

    /// Closes the transport.
    package func close() {
        switch self {
        case .plain(let socket): socket.close()
        }
    }
}

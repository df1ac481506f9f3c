#if canImport(COpenSSLTLS)
import COpenSSLTLS

#if canImport(Glibc)
import Glibc
#endif

/// One TLS session over a connected non-blocking socket (OpenSSL `SSL`): the handshake, then reads and
/// writes that never block — OpenSSL's "want read"/"want write" become ``Socket/Progress/wouldBlock``, and
/// the caller polls the socket as it would without TLS.
///
/// Thread safety: not thread-safe, like ``Socket``; used by one thread at a time (an OpenSSL session may
/// move between threads, never be used by two at once). OpenSSL's error queue is per thread and is emptied
/// before every call.
package final class TLSStream {
    /// The TCP socket under the session.
    let socket: Socket
    // Kept alive for the session: its SSL_CTX and the BIO method the session's BIO points to.
    private let context: TLSContext
    private var ssl: OpaquePointer?

    /// Runs the client handshake over `socket` until it completes or `deadline` passes, then checks the
    /// server's certificate against the context's trust and `host` (or the context's server name).
    ///
    /// Nothing is sent on the connection before this returns, so no password crosses an unverified link.
    ///
    /// - Parameters:
    ///   - socket: A connected non-blocking socket; not closed here on failure (the caller owns it).
    ///   - context: Trust, name and client certificate.
    ///   - host: The host connected to: the name (or IP address) checked and, for a name, sent as SNI.
    ///   - deadline: When the handshake must be done.
    /// - Throws: ``ConnectionError`` `.certificateRejected` with OpenSSL's verification reason (another CA,
    ///   expired, name mismatch), `.deadlineExceeded` when the server does not finish in time (a listener
    ///   that never answers), `.tlsFailed` for any other failure (a plaintext server, a refused client
    ///   certificate, no common protocol version).
    init(socket: Socket, context: TLSContext, host: String, deadline: ContinuousClock.Instant) throws(ConnectionError) {
        guard let ssl = SSL_new(context.context) else {
            throw ConnectionError(.tlsFailed, "cannot create a TLS session: \(TLSContext.errorQueueText())")
        }
        guard let bio = BIO_new(context.socketMethod) else {
            SSL_free(ssl)
            throw ConnectionError(.tlsFailed, "cannot create a TLS socket BIO: \(TLSContext.errorQueueText())")
        }
        self.socket = socket
        self.context = context
        self.ssl = ssl
        // From here a throw runs deinit, which frees the session (and with it the BIO).
        BIO_set_data(bio, UnsafeMutableRawPointer(bitPattern: Int(socket.descriptor)))
        SSL_set_bio(ssl, bio, bio)
        SSL_set_connect_state(ssl)
        // Read-ahead: one recv(2) takes whatever the socket holds (up to OpenSSL's 16 KiB buffer) rather than a
        // record's 5-byte header and then its body, so a small reply costs one system call, not two
        // (Docs/Performance.md, "Redis over TLS"). Records left in that buffer are what `hasBufferedInput`
        // reports.
        SSL_set_read_ahead(ssl, 1)
        let name = context.serverName ?? host
        // OpenSSL reads the name as a C string: "\0x" would reach it as "", which checks no name at all, and
        // "a.example\0b" as "a.example". A name can come from a server's reply (a cluster's node list), so the
        // connection refuses such names itself rather than rely on the configuration's check.
        guard !name.isEmpty, !name.utf8.contains(0) else {
            throw ConnectionError(.tlsFailed, "cannot verify against an empty name or one containing a NUL byte")
        }
        let isAddress = Self.isIPAddress(name)
        // SNI carries host names only (RFC 6066, section 3).
        if !isAddress { _ = strata_SSL_set_tlsext_host_name(ssl, name) }
        if context.verifiesCertificate {
            let named =
                isAddress
                ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name) == 1 : SSL_set1_host(ssl, name) == 1
            // RFC 6125 (section 6.4.4): a name is checked against the certificate's subject alternative names
            // only; OpenSSL would otherwise fall back to the subject's common name when there are none.
            SSL_set_hostflags(ssl, UInt32(X509_CHECK_FLAG_NEVER_CHECK_SUBJECT))
            guard named else {
                throw ConnectionError(
                    .tlsFailed, "cannot verify against the name \(name): \(TLSContext.errorQueueText())")
            }
        }
        try handshake(ssl, name: name, deadline: deadline)
    }

    deinit {
        if let ssl { SSL_free(ssl) }
    }

    /// Connects a socket to `host:port` and runs the handshake over it, all before `deadline`.
    ///
    /// - Parameters:
    ///   - host: Host name or address, also the name verified unless the context names another.
    ///   - port: TCP port.
    ///   - context: Trust, name and client certificate.
    ///   - deadline: When connecting and the handshake together must be done.
    /// - Returns: A verified session.
    /// - Throws: ``ConnectionError`` as ``Socket/connect(host:port:deadline:)`` and ``init(socket:context:host:deadline:)``
    ///   do; the socket is closed on failure.
    static func connect(
        host: String, port: Int, context: TLSContext, deadline: ContinuousClock.Instant
    ) throws(ConnectionError) -> TLSStream {
        let socket = try Socket.connect(host: host, port: port, deadline: deadline)
        do throws(ConnectionError) {
            return try TLSStream(socket: socket, context: context, host: host, deadline: deadline)
        } catch {
            socket.close()
            throw error
        }
    }

    /// The socket's descriptor, polled as without TLS.
    var descriptor: Int32 { socket.descriptor }

    /// Waits until a read or write can make progress or `deadline` passes; `false` on the deadline.
    func wait(forWriting: Bool, until deadline: ContinuousClock.Instant) -> Bool {
        hasBufferedInput || socket.wait(forWriting: forWriting, until: deadline)
    }

    private func handshake(
        _ ssl: OpaquePointer, name: String, deadline: ContinuousClock.Instant
    ) throws(ConnectionError) {
        while true {
            ERR_clear_error()
            let result = SSL_do_handshake(ssl)
            if result == 1 { break }
            let failure = SSL_get_error(ssl, result)
            switch failure {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                guard socket.wait(forWriting: failure == SSL_ERROR_WANT_WRITE, until: deadline) else {
                    throw ConnectionError(.deadlineExceeded, "the TLS handshake with \(name) missed its deadline")
                }
            default:
                // Without verification OpenSSL still records what it found; that is not why this failed.
                let verification = SSL_get_verify_result(ssl)
                if context.verifiesCertificate, verification != X509_V_OK_Long {
                    throw Self.rejection(verification, name: name)
                }
                if failure == SSL_ERROR_SYSCALL || failure == SSL_ERROR_ZERO_RETURN {
                    throw ConnectionError(
                        .tlsFailed, "the server closed the connection during the TLS handshake (not a TLS port?)")
                }
                throw ConnectionError(.tlsFailed, "the TLS handshake failed: \(TLSContext.errorQueueText())")
            }
        }
        // SSL_VERIFY_PEER already failed the handshake on a bad certificate; this makes the rule local.
        if context.verifiesCertificate {
            let verification = SSL_get_verify_result(ssl)
            guard verification == X509_V_OK_Long else { throw Self.rejection(verification, name: name) }
            guard SSL_get0_peer_certificate(ssl) != nil else {
                throw ConnectionError(.certificateRejected, "the server sent no certificate")
            }
        }
    }

    private static func rejection(_ verification: Int, name: String) -> ConnectionError {
        let reason = X509_verify_cert_error_string(verification).map { String(cString: $0) } ?? "unknown reason"
        return ConnectionError(
            .certificateRejected,
            "the server's certificate was rejected for \(name): \(reason) (X509 verify code \(verification))")
    }

    private static func isIPAddress(_ name: String) -> Bool {
        var scratch = in6_addr()
        return inet_pton(AF_INET, name, &scratch) == 1 || inet_pton(AF_INET6, name, &scratch) == 1
    }

    /// Whether the last read returned bytes and OpenSSL may hold more that `poll(2)` cannot see: the rest of
    /// a decrypted record, or whole records the read-ahead took off the socket with it. After a read that
    /// would block, whatever OpenSSL holds is an incomplete record and the socket is polled for the rest.
    private var lastReadReturnedBytes = false

    /// Whether a read may return bytes although the socket is not readable (see `lastReadReturnedBytes`).
    var hasBufferedInput: Bool {
        guard let ssl, lastReadReturnedBytes else { return false }
        return SSL_pending(ssl) > 0 || SSL_has_pending(ssl) == 1
    }

    /// Reads decrypted bytes into `buffer`; `.wouldBlock` while a whole record has not arrived.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Socket.Progress {
        guard let ssl else { return .failed(EBADF) }
        ERR_clear_error()
        let count = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
        lastReadReturnedBytes = count > 0
        if count > 0 { return .bytes(Int(count)) }
        switch SSL_get_error(ssl, count) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .wouldBlock
        // close_notify, or the TCP connection ended or was reset: a dropped connection either way.
        case SSL_ERROR_ZERO_RETURN, SSL_ERROR_SYSCALL: return .endOfStream
        default: return .failed(EPROTO)
        }
    }

    /// Encrypts and sends what the socket takes of `bytes`, at most one record at a time.
    func write(_ bytes: UnsafeRawBufferPointer) -> Socket.Progress {
        guard let ssl else { return .failed(EBADF) }
        guard !bytes.isEmpty else { return .bytes(0) }
        ERR_clear_error()
        let count = SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
        if count > 0 { return .bytes(Int(count)) }
        switch SSL_get_error(ssl, count) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .wouldBlock
        case SSL_ERROR_SYSCALL: return .failed(EPIPE)
        default: return .failed(EPROTO)
        }
    }

    /// Sends `close_notify` if the socket takes it now (never waits), frees the session, closes the socket.
    func close() {
        if let ssl {
            ERR_clear_error()
            _ = SSL_shutdown(ssl)
            SSL_free(ssl)
            self.ssl = nil
        }
        socket.close()
    }
}
/// `X509_V_OK` as `SSL_get_verify_result` returns it (a C `long`).
private let X509_V_OK_Long = Int(X509_V_OK)
#endif  // canImport(COpenSSLTLS): the system OpenSSL on Linux

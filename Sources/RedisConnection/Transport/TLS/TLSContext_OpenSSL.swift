#if canImport(COpenSSLTLS)
import COpenSSLTLS

#if canImport(Glibc)
import Glibc
#endif

/// The settings every TLS connection of one tier shares: an OpenSSL `SSL_CTX` loaded once (trust store or
/// CA file, client certificate and key, TLS 1.2 minimum), and the socket BIO the sessions read and write
/// through.
///
/// Built when the tier is created, so an unreadable CA file or a key that does not match its certificate
/// fails there, not at the first request. Thread safety: immutable after `init`; OpenSSL allows creating
/// sessions from one `SSL_CTX` on many threads at once (openssl-threads(7)).
///
/// `@unchecked Sendable` is sound: every stored property is a `let`; the two pointers are configured only in
/// `init` and freed in `deinit`, and in between the `SSL_CTX` and the BIO method are only used to make
/// sessions (`SSL_new`, `BIO_new`), which OpenSSL documents as safe from any thread.
package final class TLSContext: @unchecked Sendable {
    let context: OpaquePointer
    let socketMethod: OpaquePointer
    /// The name verified and sent as SNI instead of the host connected to.
    let serverName: String?
    /// Whether certificates and names are verified.
    let verifiesCertificate: Bool

    /// Loads `options` into a new OpenSSL context.
    ///
    /// - Parameter options: Trust, name, client certificate.
    /// - Throws: ``ConnectionError`` `.tlsFailed` naming the file and OpenSSL's reason when the CA file,
    ///   the system trust store, the client certificate or key cannot be loaded (a file that is not a
    ///   regular file, a key encrypted with a passphrase), or the key does not match the certificate. Reads
    ///   the files given (blocking I/O).
    package init(_ options: TLSOptions) throws(ConnectionError) {
        guard Self.libraryIsReady else {
            throw ConnectionError(.tlsFailed, "cannot initialize OpenSSL: \(Self.errorQueueText())")
        }
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw ConnectionError(.tlsFailed, "cannot create a TLS context: \(Self.errorQueueText())")
        }
        guard let socketMethod = Self.makeSocketMethod() else {
            SSL_CTX_free(context)
            throw ConnectionError(.tlsFailed, "cannot create the TLS socket I/O method: \(Self.errorQueueText())")
        }
        self.context = context
        self.socketMethod = socketMethod
        serverName = options.serverName
        verifiesCertificate = options.verifiesCertificate
        // TLS 1.2 at least; OpenSSL offers 1.3 first. Partial writes and a moving buffer: the I/O thread
        // retries a blocked write with the same bytes from a buffer that may have grown (more requests)
        // or moved (a borrowed connection given back).
        _ = strata_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION)
        _ = strata_SSL_CTX_set_mode(context, Int(SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER))
        // No passphrase prompt: without a callback OpenSSL asks on the terminal for an encrypted key, and
        // reads the answer from standard input, which may be the value a `strata set` is storing
        SSL_CTX_set_default_passwd_cb(context) { _, _, _, _ in 0 }
        if options.verifiesCertificate {
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
            if let file = options.certificateAuthorityFile {
                try Self.requireRegularFile(file, holding: "CA file")
                guard SSL_CTX_load_verify_locations(context, file, nil) == 1 else {
                    throw ConnectionError(
                        .tlsFailed, "cannot load the CA file \(file): \(Self.errorQueueText())")
                }
            } else if SSL_CTX_set_default_verify_paths(context) != 1 {
                throw ConnectionError(.tlsFailed, "cannot load the system trust store: \(Self.errorQueueText())")
            }
        } else {
            SSL_CTX_set_verify(context, SSL_VERIFY_NONE, nil)
        }
        if let certificate = options.clientCertificateFile {
            try Self.requireRegularFile(certificate, holding: "client certificate")
            guard SSL_CTX_use_certificate_chain_file(context, certificate) == 1 else {
                throw ConnectionError(
                    .tlsFailed, "cannot load the client certificate \(certificate): \(Self.errorQueueText())")
            }
        }
        if let key = options.clientKeyFile {
            try Self.requireRegularFile(key, holding: "client key")
            guard SSL_CTX_use_PrivateKey_file(context, key, SSL_FILETYPE_PEM) == 1 else {
                let reason = Self.errorQueueText()
                // Loading a key already compares it with the certificate; say so rather than blame the format.
                if reason.contains("key values mismatch") {
                    throw ConnectionError(.tlsFailed, "the client key \(key) does not match the client certificate")
                }
                throw ConnectionError(
                    .tlsFailed, "cannot load the client key \(key) (it must be unencrypted PEM): \(reason)")
            }
            guard SSL_CTX_check_private_key(context) == 1 else {
                throw ConnectionError(
                    .tlsFailed, "the client key \(key) does not match the client certificate")
            }
        }
    }

    /// Throws unless `path` names a regular file (after symbolic links): OpenSSL would block forever
    /// opening a FIFO, and reports a directory or a device only as "no certificate found".
    private static func requireRegularFile(_ path: String, holding what: String) throws(ConnectionError) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            throw ConnectionError(.tlsFailed, "cannot read the \(what) \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw ConnectionError(.tlsFailed, "the \(what) \(path) is not a regular file")
        }
    }

    /// Whether libssl initialized; evaluated once per process, before this module's first OpenSSL call.
    ///
    /// Without `OPENSSL_INIT_NO_ATEXIT`, OpenSSL's first use registers an `atexit` handler that frees its
    /// global state, and a process exiting while a connection thread is inside libssl or libcrypto (a
    /// handshake, a read) can crash on its way out. The flag counts only on the process's first
    /// initialization; CacheCrypto's back end passes it too, so whichever runs first, the handler is never
    /// registered. The error strings are loaded now so that a failure's text never triggers a late load.
    /// Thread safety: a `static let`, initialized once under Swift's lazy-global lock.
    static let libraryIsReady: Bool =
        OPENSSL_init_ssl(UInt64(OPENSSL_INIT_NO_ATEXIT | OPENSSL_INIT_LOAD_SSL_STRINGS), nil) == 1

    deinit {
        SSL_CTX_free(context)
        BIO_meth_free(socketMethod)
    }

    /// Frees OpenSSL's state of the calling thread (its error queue and caches) now, for a thread that is
    /// about to exit after using TLS.
    ///
    /// OpenSSL frees that state when the thread exits, and frees every thread's state again in its own
    /// exit handler; a connection thread that ends (after ``RedisConnection/close()`` returned) while the
    /// process exits can then free it twice. Freed here, before the thread reports that it has ended, it
    /// is gone before anyone can exit.
    package static func releaseThreadState() {
        OPENSSL_thread_stop()
    }

    /// OpenSSL's queued error texts of this thread, joined, or "no detail"; empties the queue.
    static func errorQueueText() -> String {
        var texts: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            texts.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return texts.isEmpty ? "no detail" : texts.joined(separator: "; ")
    }

    /// A BIO over a non-blocking socket that sends with `MSG_NOSIGNAL`: OpenSSL's own socket BIO calls
    /// `write(2)`, which raises `SIGPIPE` when the server has reset the connection and would end the process.
    /// The descriptor is the BIO's data pointer; the BIO never closes it (the ``Socket`` does).
    private static func makeSocketMethod() -> OpaquePointer? {
        guard let method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "strata-socket") else {
            return nil
        }
        _ = BIO_meth_set_write(method) { bio, data, length in
            guard let bio else { return -1 }
            strata_BIO_clear_retry_flags(bio)
            let sent = send(descriptor(of: bio), data, Int(length), Int32(MSG_NOSIGNAL))
            if sent >= 0 { return Int32(sent) }
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { strata_BIO_set_retry_write(bio) }
            return -1
        }
        _ = BIO_meth_set_read(method) { bio, data, length in
            guard let bio else { return -1 }
            strata_BIO_clear_retry_flags(bio)
            let received = recv(descriptor(of: bio), data, Int(length), 0)
            if received >= 0 { return Int32(received) }
            if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { strata_BIO_set_retry_read(bio) }
            return -1
        }
        // Only a flush must succeed (nothing is buffered here); every other control is "not supported".
        _ = BIO_meth_set_ctrl(method) { _, command, _, _ in command == BIO_CTRL_FLUSH ? 1 : 0 }
        _ = BIO_meth_set_create(method) { bio in
            BIO_set_init(bio, 1)
            return 1
        }
        _ = BIO_meth_set_destroy(method) { _ in 1 }
        return method
    }
}

/// The descriptor a socket BIO was given (``TLSContext``'s BIO method).
private func descriptor(of bio: OpaquePointer) -> Int32 {
    Int32(truncatingIfNeeded: Int(bitPattern: BIO_get_data(bio)))
}
#endif  // canImport(COpenSSLTLS): the system OpenSSL on Linux

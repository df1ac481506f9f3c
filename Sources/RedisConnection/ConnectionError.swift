/// A failure of the connection layer: a malformed reply, a missed deadline, an unreachable or unsuitable
/// server, or an error reply the layers above treat specially.
///
/// Package-level, like everything in this module: the Redis tier turns it into its public `ConnectionError`
/// (same codes, same message) where a failure leaves the transport, so users see one error type and this
/// module stays free to change. The code list here is the one place the transport's failure kinds are
/// named; the public error mirrors it case for case.
///
/// Thread safety: a value type; `Sendable`.
package struct ConnectionError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is; the names are the public `ConnectionError.Code` names.
    package enum Code: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// The server sent bytes that are not valid RESP, or a frame over the decoder's limits.
        case protocolViolation
        /// A connect, write or read deadline passed.
        case deadlineExceeded
        /// The circuit breaker is open: the request failed at once, without a system call.
        case unavailable
        /// The connection closed before the reply arrived.
        case connectionClosed
        /// Name resolution or `connect(2)` failed.
        case connectFailed
        /// `-WRONGPASS`, `-NOAUTH`, `-NOPERM`, or a refused handshake.
        case authenticationFailed
        /// Any other error reply.
        case serverError
        /// `-READONLY`.
        case readOnly
        /// `-LOADING`.
        case loading
        /// `-MOVED`.
        case moved
        /// `-ASK`.
        case ask
        /// `-CROSSSLOT`.
        case crossSlot
        /// `-OOM`.
        case outOfMemory
        /// The handshake found a server in cluster (or sentinel) mode.
        case clusterMode
        /// The handshake found a replica.
        case replica
        /// The server's TLS certificate failed verification (another CA, expired, a name mismatch).
        case certificateRejected
        /// TLS could not be set up: a TLS handshake that failed for another reason than the certificate (a
        /// plaintext server, a refused client certificate), or TLS settings that cannot be loaded.
        case tlsFailed

        /// The code's name, such as `deadlineExceeded`.
        package var description: String { rawValue }
    }

    /// What kind of failure this is.
    package var code: Code
    /// What happened, in one line.
    package var message: String

    /// Creates an error.
    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The standalone handshake's refusal of a Redis Cluster node (a sentinel is refused with the same code and
    /// another message): the one refusal the Redis tier answers by switching to the cluster layer.
    package static let clusterNodeRefused = ConnectionError(
        .clusterMode, "the server runs in cluster mode; a standalone primary is required")

    /// `code: message`.
    package var description: String { "\(code): \(message)" }
}

extension ConnectionError {
    /// The typed error for an error reply: `-READONLY`, `-LOADING`, `-MOVED`, `-ASK`, `-CROSSSLOT`, `-OOM`
    /// and the credential errors get their own codes, anything else is ``Code/serverError``.
    ///
    /// The error code is the reply's first word (RESP3 specification, "Simple error").
    ///
    /// - Parameter reply: The text of a simple or blob error.
    /// - Returns: The error to throw.
    package static func reply(_ reply: String) -> ConnectionError {
        let word = reply.prefix { $0 != " " }
        let code: Code =
            switch word {
            case "READONLY": .readOnly
            case "LOADING": .loading
            case "MOVED": .moved
            case "ASK": .ask
            case "CROSSSLOT": .crossSlot
            case "OOM": .outOfMemory
            case "WRONGPASS", "NOAUTH", "NOPERM": .authenticationFailed
            default: .serverError
            }
        return ConnectionError(code, reply)
    }
}

import RedisConnection

/// An error of the Redis connection layer: a malformed reply, a missed deadline, an unreachable or
/// unsuitable server, or an error reply the tier treats specially.
///
/// Switch over ``code``; read ``message`` for the details (for a server error, the server's own text).
/// ``Code`` is a struct over a private enum, so new codes can be added without breaking a `switch`.
///
/// Thread safety: a value type; `Sendable`.
public struct RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is. Compare with `==`.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        // The connection layer's code list is the one list of kinds; this public struct wraps it so the
        // transport module stays package-level and a new kind never breaks a user's `switch`.
        private let base: ConnectionError.Code
        fileprivate init(_ base: ConnectionError.Code) { self.base = base }

        /// The server sent bytes that are not valid RESP, or a frame over the decoder's limits; the
        /// connection is closed, since the reply stream can no longer be trusted.
        public static let protocolViolation = Code(.protocolViolation)
        /// A connect, write or read deadline passed; every request pending on the connection failed with
        /// this code and the connection was closed.
        public static let deadlineExceeded = Code(.deadlineExceeded)
        /// The circuit breaker is open after repeated failures: the request failed at once, without a
        /// system call.
        public static let unavailable = Code(.unavailable)
        /// The connection closed (the peer hung up or an I/O call failed) before the reply arrived.
        public static let connectionClosed = Code(.connectionClosed)
        /// The server could not be reached: name resolution or `connect(2)` failed.
        public static let connectFailed = Code(.connectFailed)
        /// The server refused the credentials (`-WRONGPASS`, `-NOAUTH`, `-NOPERM` during the handshake).
        public static let authenticationFailed = Code(.authenticationFailed)
        /// Any other error reply (`-ERR …`, `-WRONGTYPE …`); ``RedisError/message`` holds its text.
        public static let serverError = Code(.serverError)
        /// `-READONLY`: the server is a read-only replica.
        public static let readOnly = Code(.readOnly)
        /// `-LOADING`: the server is loading its data set and serves no commands yet.
        public static let loading = Code(.loading)
        /// `-MOVED`: a cluster redirected the key to another node (seen only when redirects ran out or a
        /// command could not follow one; the tier follows them on a cluster).
        public static let moved = Code(.moved)
        /// `-ASK`: a cluster is migrating the key's slot (seen only when redirects ran out).
        public static let ask = Code(.ask)
        /// `-CROSSSLOT`: a command named keys of several cluster slots.
        public static let crossSlot = Code(.crossSlot)
        /// `-OOM`: the server is at `maxmemory` and its policy refuses writes.
        public static let outOfMemory = Code(.outOfMemory)
        /// The handshake found a server in sentinel mode (a cluster node is not refused: the tier switches to the
        /// cluster layer).
        public static let clusterMode = Code(.clusterMode)
        /// The handshake found a replica; a writable primary is required.
        public static let replica = Code(.replica)
        /// The server's TLS certificate failed verification: signed by a CA that is not trusted, expired or
        /// not yet valid, or issued for another name than the one connected to (or
        /// ``RedisCacheConfiguration/TLS/serverName``). ``RedisError/message`` holds OpenSSL's reason.
        public static let certificateRejected = Code(.certificateRejected)
        /// TLS could not be set up for another reason than the certificate: the server speaks plaintext on
        /// that port, refused the client certificate, or shares no protocol version (TLS 1.2 at least).
        public static let tlsFailed = Code(.tlsFailed)

        /// The code's name, such as `deadlineExceeded`.
        public var description: String { base.rawValue }
    }

    /// What kind of failure this is.
    public var code: Code
    /// What happened, in one line.
    public var message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: The kind of failure.
    ///   - message: What happened, in one line.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// `code: message`.
    public var description: String { "\(code): \(message)" }
}

extension RedisError {
    /// The typed error for an error reply: `-READONLY`, `-LOADING`, `-MOVED`, `-ASK`, `-CROSSSLOT` and
    /// `-OOM` get their own codes, anything else is ``Code/serverError``.
    ///
    /// The error code is the reply's first word (RESP3 specification, "Simple error").
    ///
    /// - Parameter reply: The text of a simple or blob error.
    /// - Returns: The error to throw.
    public static func reply(_ reply: String) -> RedisError {
        RedisError(ConnectionError.reply(reply))
    }

    /// The public form of a connection-layer failure: the same code and message.
    init(_ error: ConnectionError) {
        self.init(Code(error.code), error.message)
    }
}

extension RedisConnection {
    /// One server endpoint: a host name or address and a TCP port.
    ///
    /// The transport's own copy of the tier's public `RedisCacheConfiguration.Address`, so this module
    /// depends on no tier. Thread safety: a plain value; `Sendable`.
    package struct Address: Sendable, Hashable, CustomStringConvertible {
        /// The host name or address.
        package var host: String
        /// The TCP port.
        package var port: Int

        /// Creates an address.
        package init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// `host:port`.
        package var description: String { "\(host):\(port)" }
    }

    /// Where the server is, who to be, and how long to wait.
    ///
    /// The deadline defaults are cache-grade: a cache that waits longer than a few tens of milliseconds
    /// for a remote tier is slower than recomputing. Thread safety: a value type; `Sendable`.
    package struct Configuration: Sendable {
        /// The server's host name or address. Default `127.0.0.1`.
        package var host: String
        /// The server's TCP port. Default 6379.
        package var port: Int
        /// Addresses tried in order after `host`:`port` fails to connect or to complete the handshake.
        package var fallbackAddresses: [Address] = []
        /// The ACL user for `HELLO … AUTH`; `nil` with a password means `default`.
        package var username: String?
        /// The password; `nil` sends no credentials.
        package var password: String?
        /// The name set with `HELLO … SETNAME`, shown by `CLIENT LIST`. Default `strata`.
        package var clientName: String
        /// How long `connect(2)` may take. Default 250 ms.
        package var connectTimeout: Duration
        /// How long a written request may wait for its reply. Default 50 ms.
        package var readTimeout: Duration
        /// How long a queued request may wait to be written. Default 100 ms.
        package var writeTimeout: Duration
        /// How long the connection may be idle before a keep-alive `PING`. Default 500 ms.
        package var keepAliveInterval: Duration
        /// Backoff and breaker settings (its counters start at zero).
        package var breaker: CircuitBreaker
        /// Caps on each reply.
        package var decoderLimits: RESPDecoder.Limits
        /// How long a caller that found the connection idle waits on its own thread for its reply, reading
        /// without blocking and yielding the processor in between, before the I/O thread takes the request
        /// over. Default 100 µs (a loopback round trip is 15–40 µs); `.zero` sends every request through the
        /// I/O thread. Ignored when ``pushHandler`` is set (pushes are read on the I/O thread only).
        package var inlineReplyWait: Duration
        /// Called on the I/O thread with each push (`>`) the server sends, such as client-tracking
        /// `invalidate` messages; it must return quickly and must not call back into the connection
        /// synchronously. Default: pushes are dropped.
        package var pushHandler: (@Sendable (RESPValue) -> Void)?
        /// TLS settings loaded once, or `nil` for plain TCP. With TLS, ``connectTimeout`` covers the TCP
        /// connect and the TLS handshake together, and nothing (no `HELLO`, no password) is sent before the
        /// server's certificate is verified. Default `nil`.
        package var tls: TLSContext?
        /// Whether the handshake accepts a node of a Redis Cluster (`mode cluster`), primary or replica. Only the
        /// cluster layer sets it (``ClusterConnection``): it reads the slot map from any node, and a node that
        /// does not serve a slot answers `MOVED`. The standalone tier keeps refusing a cluster with
        /// ``ConnectionError/Code/clusterMode``. Default `false`.
        package var acceptsClusterNode = false

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - host: Host name or address.
        ///   - port: TCP port.
        ///   - username: ACL user, or `nil`.
        ///   - password: Password, or `nil` for none.
        ///   - clientName: Name for `CLIENT LIST`.
        ///   - connectTimeout: Connect deadline.
        ///   - readTimeout: Reply deadline, from the moment the request was written.
        ///   - writeTimeout: Write deadline, from the moment the request was queued.
        ///   - keepAliveInterval: Idle time before a `PING`.
        ///   - breaker: Backoff and breaker settings.
        ///   - decoderLimits: Caps on each reply.
        package init(
            host: String = "127.0.0.1", port: Int = 6379, username: String? = nil, password: String? = nil,
            clientName: String = "strata", connectTimeout: Duration = .milliseconds(250),
            readTimeout: Duration = .milliseconds(50), writeTimeout: Duration = .milliseconds(100),
            keepAliveInterval: Duration = .milliseconds(500), breaker: CircuitBreaker = CircuitBreaker(),
            decoderLimits: RESPDecoder.Limits = RESPDecoder.Limits()
        ) {
            self.host = host
            self.port = port
            self.username = username
            self.password = password
            self.clientName = clientName
            self.connectTimeout = connectTimeout
            self.readTimeout = readTimeout
            self.writeTimeout = writeTimeout
            self.keepAliveInterval = keepAliveInterval
            self.breaker = breaker
            self.decoderLimits = decoderLimits
            self.inlineReplyWait = .microseconds(100)
            self.pushHandler = nil
            self.tls = nil
        }
    }

    /// Counters of one connection's life. Thread safety: a value type, read as one snapshot.
    package struct Statistics: Sendable, Equatable {
        /// Successful connects and handshakes, the first included.
        package var connects = 0
        /// Connects after the first (after a loss).
        package var reconnects = 0
        /// Times a deadline closed the connection.
        package var deadlineMisses = 0
        /// Times the breaker opened.
        package var breakerOpenings = 0
        /// Requests refused at once while the breaker was open.
        package var rejectedWhileOpen = 0
        /// `send(2)` calls that moved request bytes; with many concurrent callers far fewer than the
        /// requests, since everything queued is written together. Updated each time the I/O thread wakes.
        package var writes = 0
        /// Keep-alive `PING`s sent.
        package var keepAlivePings = 0
        /// System calls made on callers' threads: wake-ups of the I/O thread, and the sends and reads of
        /// inline exchanges; a refused request makes none.
        package var callerSystemCalls = 0
        /// Requests whose reply was read on the caller's own thread (the connection was idle), without the
        /// I/O thread.
        package var inlineReplies = 0
        /// Requests written inline whose reply was slower than the inline wait (or whose write would have
        /// blocked), handed to the I/O thread to complete.
        package var inlineHandoffs = 0
        /// Handshakes refused because the server is a node of a Redis Cluster (``ConnectionError/Code/clusterMode``):
        /// the Redis tier switches to the cluster layer on seeing one, whichever error its own request got (a
        /// request after the refusal fails with the open breaker's ``ConnectionError/Code/unavailable``).
        package var clusterNodeRefusals = 0

        /// Creates zeroed counters.
        package init() {}

        /// Adds `other`'s counters to these (a pool's or a cluster's connections, reported as one).
        package mutating func add(_ other: Statistics) {
            connects += other.connects
            reconnects += other.reconnects
            deadlineMisses += other.deadlineMisses
            breakerOpenings += other.breakerOpenings
            rejectedWhileOpen += other.rejectedWhileOpen
            writes += other.writes
            keepAlivePings += other.keepAlivePings
            callerSystemCalls += other.callerSystemCalls
            inlineReplies += other.inlineReplies
            inlineHandoffs += other.inlineHandoffs
            clusterNodeRefusals += other.clusterNodeRefusals
        }
    }

    /// What the connection is doing now.
    package enum State: Sendable, Equatable {
        /// No socket; the next request or background attempt connects.
        case disconnected
        /// Connected and handshaken; requests are sent at once.
        case connected
        /// The breaker is open: requests fail at once until a background probe succeeds.
        case unavailable
        /// ``RedisConnection/close()`` was called.
        case closed
    }
}

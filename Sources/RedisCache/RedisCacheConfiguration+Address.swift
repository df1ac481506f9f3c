extension RedisCacheConfiguration {
    /// One server endpoint: a host name or address and a TCP port.
    ///
    /// Used by ``RedisCacheConfiguration/fallbackAddresses``; the first address is
    /// ``RedisCacheConfiguration/host`` and ``RedisCacheConfiguration/port``.
    ///
    /// Thread safety: a plain value; `Sendable`.
    public struct Address: Sendable, Hashable, CustomStringConvertible {
        /// The host name or address.
        public var host: String
        /// The TCP port, 1 to 65535 (checked when the cache is created).
        public var port: Int

        /// Creates an address.
        ///
        /// - Parameters:
        ///   - host: Host name or address.
        ///   - port: TCP port.
        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }

        /// `host:port`.
        public var description: String { "\(host):\(port)" }
    }
}

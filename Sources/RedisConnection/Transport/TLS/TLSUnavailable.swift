#if !canImport(COpenSSLTLS) && !canImport(Network)
/// TLS where this package has no back end (neither the system OpenSSL nor Network.framework; Docs/Platforms.md):
/// creating a context fails, so a `rediss://` tier is refused when it is created rather than sending anything
/// in plaintext.
///
/// Thread safety: never instantiated.
package final class TLSContext: Sendable {
    /// Always throws.
    ///
    /// - Parameter options: Ignored.
    /// - Throws: ``ConnectionError`` `.tlsFailed`: TLS is not available on this platform.
    package init(_ options: TLSOptions) throws(ConnectionError) {
        throw ConnectionError(.tlsFailed, "TLS is not available on this platform")
    }

    /// Does nothing: no TLS library keeps state for the thread.
    package static func releaseThreadState() {}
}

/// Never created where ``TLSContext`` cannot be (see there).
///
/// Thread safety: never instantiated.
package final class TLSStream {
    private init() {}

    static func connect(
        host: String, port: Int, context: TLSContext, deadline: ContinuousClock.Instant
    ) throws(ConnectionError) -> TLSStream {
        throw ConnectionError(.tlsFailed, "TLS is not available on this platform")
    }

    var descriptor: Int32 { -1 }
    var hasBufferedInput: Bool { false }
    func wait(forWriting: Bool, until deadline: ContinuousClock.Instant) -> Bool { true }
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Socket.Progress { .failed(0) }
    func write(_ bytes: UnsafeRawBufferPointer) -> Socket.Progress { .failed(0) }
    func close() {}
}
#endif  // !canImport(COpenSSLTLS) && !canImport(Network): no TLS back end on this platform

#if !canImport(COpenSSLTLS)
/// TLS where this package has no back end yet (Apple platforms; Docs/Platforms.md): creating a context
/// fails, so a `rediss://` tier is refused when it is created rather than sending anything in plaintext.
///
/// Thread safety: never instantiated.
package final class TLSContext: Sendable {
    /// Always throws.
    ///
    /// - Parameter options: Ignored.
    /// - Throws: ``ConnectionError`` `.tlsFailed`: TLS is not available on this platform yet.
    package init(_ options: TLSOptions) throws(ConnectionError) {
        throw ConnectionError(.tlsFailed, "TLS is not available on this platform yet")
    }

    /// Does nothing: no TLS library keeps state for the thread.
    package static func releaseThreadState() {}
}

/// Never created where ``TLSContext`` cannot be (see there).
///
/// Thread safety: never instantiated.
package final class TLSStream {
    let socket: Socket

    init(socket: Socket, context: TLSContext, host: String, deadline: ContinuousClock.Instant) throws(ConnectionError) {
        throw ConnectionError(.tlsFailed, "TLS is not available on this platform yet")
    }

    var hasBufferedInput: Bool { false }
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Socket.Progress { .failed(0) }
    func write(_ bytes: UnsafeRawBufferPointer) -> Socket.Progress { .failed(0) }
    func close() { socket.close() }
}
#endif  // !canImport(COpenSSLTLS): no TLS back end on this platform yet

extension RESPDecoder {
    /// Caps on what one reply may claim, checked before anything is allocated for it.
    ///
    /// A frame over a cap is a ``ConnectionError/Code/protocolViolation``: the connection that read it is
    /// closed. The defaults fit the Redis tier: values up to 1 MiB plus an envelope, shallow replies.
    ///
    /// Thread safety: a value type; `Sendable`.
    package struct Limits: Sendable, Equatable {
        /// The largest blob, blob error or verbatim string accepted, in bytes. Default 1 MiB + 64 KiB.
        package var maximumBulkLength: Int
        /// The deepest nesting of arrays, maps, sets, attributes and pushes accepted; a top-level
        /// aggregate has depth 1. Default 16.
        package var maximumDepth: Int
        /// The most elements (for maps and attributes: pairs) one aggregate may announce. Default 1,048,576.
        package var maximumAggregateCount: Int
        /// The longest line of a simple string, simple error, number or header accepted, in bytes,
        /// CRLF excluded. Default 64 KiB.
        package var maximumLineLength: Int
        /// The most bytes one reply may occupy while it is incomplete, in bytes. Default 64 MiB.
        package var maximumFrameLength: Int

        /// Creates limits.
        ///
        /// - Parameters:
        ///   - maximumBulkLength: Largest blob, in bytes.
        ///   - maximumDepth: Deepest nesting; a top-level aggregate has depth 1.
        ///   - maximumAggregateCount: Most elements (or pairs) per aggregate.
        ///   - maximumLineLength: Longest line, in bytes.
        ///   - maximumFrameLength: Most bytes of one incomplete reply, in bytes.
        package init(
            maximumBulkLength: Int = 1 << 20 + 64 << 10, maximumDepth: Int = 16,
            maximumAggregateCount: Int = 1 << 20, maximumLineLength: Int = 64 << 10,
            maximumFrameLength: Int = 64 << 20
        ) {
            self.maximumBulkLength = maximumBulkLength
            self.maximumDepth = maximumDepth
            self.maximumAggregateCount = maximumAggregateCount
            self.maximumLineLength = maximumLineLength
            self.maximumFrameLength = maximumFrameLength
        }
    }
}

/// An incremental RESP3 reply decoder: feed it bytes as they arrive, take whole replies out.
///
/// ``next()`` returns `nil` while the buffered bytes hold only part of a reply ("need more bytes") and
/// consumes nothing then; it returns each complete reply once, in order. Every type of the RESP3
/// specification is decoded, with RESP2's nulls as ``RESPValue/null``
/// (https://github.com/redis/redis-specifications/blob/master/protocol/RESP3.md). Streamed strings and
/// aggregates (`$?`, `*?`), which servers do not send today, are rejected.
///
/// Every length, every CRLF and every number is validated. Anything malformed, or over ``Limits``, throws
/// ``ConnectionError/Code/protocolViolation`` before memory is set aside for it; after that the decoder keeps
/// throwing the same error, since the stream can no longer be framed.
///
/// ```swift
/// var decoder = RESPDecoder()
/// decoder.append(Array("$5\r\nhel".utf8))
/// try decoder.next()  // nil: need more bytes
/// decoder.append(Array("lo\r\n".utf8))
/// try decoder.next()  // .bulkString("hello")
/// ```
///
/// Thread safety: a value type with no shared state; confine each instance to one thread or task.
package struct RESPDecoder: Sendable {
    /// The caps this decoder enforces.
    package let limits: Limits
    private var buffer: [UInt8] = []
    private var start = 0
    private var failure: ConnectionError?

    /// Creates a decoder with nothing buffered.
    ///
    /// - Parameter limits: The caps on one reply.
    package init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// The bytes received but not yet returned as part of a reply.
    package var bufferedByteCount: Int { buffer.count - start }

    /// Buffers bytes read from the connection.
    ///
    /// - Parameter bytes: The next bytes of the stream.
    /// - Complexity: Amortized O(n) in `bytes.count`.
    package mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Takes the next complete reply out of the buffer.
    ///
    /// - Returns: The reply, or `nil` when the buffer holds only part of one (nothing is consumed).
    /// - Throws: ``ConnectionError`` with code ``ConnectionError/Code/protocolViolation`` when the bytes are not
    ///   valid RESP or exceed ``limits``; every later call throws it again.
    /// - Complexity: O(n) in the buffered bytes; a reply that arrives in many pieces is parsed again from
    ///   its start on each call.
    package mutating func next() throws(ConnectionError) -> RESPValue? {
        if let failure { throw failure }
        var parser = RESPParser(bytes: buffer, position: start, limits: limits)
        do throws(ConnectionError) {
            guard let value = try parser.value(depth: 0) else {
                if bufferedByteCount > limits.maximumFrameLength {
                    throw ConnectionError(
                        .protocolViolation,
                        "a reply exceeds the maximum frame length of \(limits.maximumFrameLength) bytes")
                }
                return nil
            }
            start = parser.position
            if start == buffer.count {
                buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 16)
                start = 0
            }
            return value
        } catch {
            failure = error
            throw error
        }
    }
}

/// One reply frame of the Redis serialization protocol, version 3 (RESP3), or of its subset RESP2.
///
/// Each case is one of the types of the RESP3 specification
/// (https://github.com/redis/redis-specifications/blob/master/protocol/RESP3.md, "RESP3 types"). RESP2's
/// null bulk string (`$-1`) and null array (`*-1`) decode as ``null``, as the specification says clients
/// should treat them. Byte payloads stay bytes: a Redis string is binary-safe and need not be UTF-8.
///
/// Thread safety: a value type; `Sendable`.
package enum RESPValue: Sendable, Equatable {
    /// One key and its value inside a ``map(_:)`` or ``attribute(_:_:)``.
    package struct Pair: Sendable, Equatable {
        /// The field.
        package var key: RESPValue
        /// The value of the field.
        package var value: RESPValue

        /// Creates a pair.
        ///
        /// - Parameters:
        ///   - key: The field.
        ///   - value: The value of the field.
        package init(key: RESPValue, value: RESPValue) {
            self.key = key
            self.value = value
        }
    }

    /// `+text`: a short, line-safe string such as `OK`.
    case simpleString(String)
    /// `-CODE message`: an error reply; the first word is the error code (`ERR`, `MOVED`, …).
    case simpleError(String)
    /// `:n`: a signed 64-bit integer.
    case integer(Int64)
    /// `$n`: a binary-safe string of `n` bytes.
    case bulkString([UInt8])
    /// `_`, or RESP2's `$-1` / `*-1`: no value.
    case null
    /// `#t` / `#f`.
    case boolean(Bool)
    /// `,`: a double, including `inf`, `-inf` and `nan`.
    case double(Double)
    /// `(`: an integer outside the 64-bit range, as its decimal digits with an optional leading `-`.
    case bigNumber(String)
    /// `!n`: a binary-safe error of `n` bytes.
    case blobError([UInt8])
    /// `=n`: a string with a three-letter format (`txt`, `mkd`) and its text.
    case verbatimString(format: String, text: [UInt8])
    /// `*n`: an ordered list.
    case array([RESPValue])
    /// `%n`: `n` key–value pairs, in the order the server sent them.
    case map([Pair])
    /// `~n`: an unordered collection, in the order the server sent it.
    case set([RESPValue])
    /// `|n`: auxiliary pairs the server attaches to the reply that follows them.
    indirect case attribute([Pair], RESPValue)
    /// `>n`: out-of-band data (for example `invalidate` messages of client tracking), not a reply to any
    /// request.
    case push([RESPValue])
}

extension RESPValue {
    /// The text of a simple, bulk or verbatim string, decoded as UTF-8; `nil` for other types or invalid
    /// UTF-8.
    package var string: String? {
        switch self {
        case .simpleString(let text): return text
        case .bulkString(let bytes), .verbatimString(_, let bytes):
            // Invalid UTF-8 decodes with replacement characters, so its bytes differ from the original.
            let text = String(decoding: bytes, as: UTF8.self)
            return text.utf8.elementsEqual(bytes) ? text : nil
        case .attribute(_, let value): return value.string
        default: return nil
        }
    }

    /// The message of a simple or blob error; `nil` for other types.
    package var errorMessage: String? {
        switch self {
        case .simpleError(let message): return message
        case .blobError(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .attribute(_, let value): return value.errorMessage
        default: return nil
        }
    }
}

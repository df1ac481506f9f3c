/// One attempt at parsing a reply from a position in a buffer: recursive descent over the RESP3 grammar
/// (https://github.com/redis/redis-specifications/blob/master/protocol/RESP3.md).
///
/// Every method returns `nil` when the bytes run out before the item ends ("need more bytes"; the caller
/// throws away the partial work and tries again later) and throws on anything malformed. Recursion is
/// bounded by `limits.maximumDepth`, allocations by the bytes actually present.
struct RESPParser {
    let bytes: [UInt8]
    var position: Int
    let limits: RESPDecoder.Limits

    private static let cr = UInt8(ascii: "\r")
    private static let lf = UInt8(ascii: "\n")

    init(bytes: [UInt8], position: Int, limits: RESPDecoder.Limits) {
        self.bytes = bytes
        self.position = position
        self.limits = limits
    }

    // MARK: - Values

    /// Parses one value whose enclosing aggregates are `depth` deep.
    mutating func value(depth: Int) throws(RedisError) -> RESPValue? {
        guard position < bytes.count else { return nil }
        let marker = bytes[position]
        position += 1
        switch marker {
        case UInt8(ascii: "+"):
            return try line().map { .simpleString(String(decoding: $0, as: UTF8.self)) }
        case UInt8(ascii: "-"):
            return try line().map { .simpleError(String(decoding: $0, as: UTF8.self)) }
        case UInt8(ascii: ":"):
            guard let text = try line() else { return nil }
            return .integer(try Self.integer(text))
        case UInt8(ascii: "_"):
            guard let text = try line() else { return nil }
            guard text.isEmpty else { throw Self.violation("a null (_) carries \(text.count) bytes") }
            return .null
        case UInt8(ascii: "#"):
            guard let text = try line() else { return nil }
            switch text {
            case [UInt8(ascii: "t")]: return .boolean(true)
            case [UInt8(ascii: "f")]: return .boolean(false)
            default: throw Self.violation("a boolean (#) is neither t nor f")
            }
        case UInt8(ascii: ","):
            guard let text = try line() else { return nil }
            return .double(try Self.double(text))
        case UInt8(ascii: "("):
            guard let text = try line() else { return nil }
            return .bigNumber(try Self.bigNumber(text))
        case UInt8(ascii: "$"):
            guard let blob = try blob(allowsNull: true) else { return nil }
            return blob.map(RESPValue.bulkString) ?? .null
        case UInt8(ascii: "!"):
            guard let blob = try blob(allowsNull: false), let blob else { return nil }
            return .blobError(blob)
        case UInt8(ascii: "="):
            guard let blob = try blob(allowsNull: false), let blob else { return nil }
            guard blob.count >= 4, blob[3] == UInt8(ascii: ":") else {
                throw Self.violation("a verbatim string (=) lacks its three-letter format and colon")
            }
            return .verbatimString(format: String(decoding: blob[0..<3], as: UTF8.self), text: Array(blob[4...]))
        case UInt8(ascii: "*"):
            guard let elements = try elements(depth: depth, allowsNull: true) else { return nil }
            return elements.map(RESPValue.array) ?? .null
        case UInt8(ascii: "~"):
            guard let elements = try elements(depth: depth, allowsNull: false), let elements else { return nil }
            return .set(elements)
        case UInt8(ascii: ">"):
            guard let elements = try elements(depth: depth, allowsNull: false), let elements else { return nil }
            return .push(elements)
        case UInt8(ascii: "%"):
            return try pairs(depth: depth).map(RESPValue.map)
        case UInt8(ascii: "|"):
            guard let pairs = try pairs(depth: depth), let value = try value(depth: depth) else { return nil }
            return .attribute(pairs, value)
        default:
            throw Self.violation("unknown type byte 0x\(String(marker, radix: 16)) at offset \(position - 1)")
        }
    }

    // MARK: - Framing

    /// The bytes up to the next CRLF, which is consumed; a lone CR or LF inside the line is malformed.
    private mutating func line() throws(RedisError) -> ArraySlice<UInt8>? {
        let end = min(bytes.count, position + limits.maximumLineLength + 2)
        var index = position
        while index < end {
            let byte = bytes[index]
            if byte == Self.lf { throw Self.violation("a line feed without a carriage return") }
            if byte == Self.cr {
                guard index + 1 < bytes.count else { return nil }
                guard bytes[index + 1] == Self.lf else { throw Self.violation("a carriage return without a line feed") }
                let text = bytes[position..<index]
                position = index + 2
                return text
            }
            index += 1
        }
        if end - position > limits.maximumLineLength {
            throw Self.violation("a line longer than \(limits.maximumLineLength) bytes")
        }
        return nil
    }

    /// A length header: `-1` (only where `allowsNull`) or a non-negative decimal without sign or padding.
    private mutating func length(allowsNull: Bool, maximum: Int, what: String) throws(RedisError) -> Int?? {
        guard let text = try line() else { return nil }
        if allowsNull, text.elementsEqual("-1".utf8) { return .some(nil) }
        if text.first == UInt8(ascii: "?") { throw Self.violation("streamed \(what)s are not supported") }
        guard !text.isEmpty, text.count <= 19, text.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            text.count == 1 || text.first != 0x30
        else { throw Self.violation("a \(what) length is not a decimal count") }
        // 18 digits always fit in an Int; a 19th could overflow it (a trap), and no cap is that large.
        guard text.count <= 18 else {
            throw Self.violation("a \(what) of \(text.count) digits exceeds the limit of \(maximum)")
        }
        let value = text.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        guard value <= maximum else { throw Self.violation("a \(what) of \(value) exceeds the limit of \(maximum)") }
        return .some(value)
    }

    /// `<length>\r\n<bytes>\r\n`; `.some(nil)` for RESP2's null `-1`.
    private mutating func blob(allowsNull: Bool) throws(RedisError) -> [UInt8]?? {
        guard let header = try length(allowsNull: allowsNull, maximum: limits.maximumBulkLength, what: "blob")
        else { return nil }
        guard let count = header else { return .some(nil) }
        guard bytes.count - position >= count + 2 else { return nil }
        guard bytes[position + count] == Self.cr, bytes[position + count + 1] == Self.lf else {
            throw Self.violation("a blob of \(count) bytes is not followed by CRLF")
        }
        let blob = Array(bytes[position..<(position + count)])
        position += count + 2
        return .some(blob)
    }

    /// `<count>\r\n` and that many values one level deeper; `.some(nil)` for RESP2's null array.
    private mutating func elements(depth: Int, allowsNull: Bool) throws(RedisError) -> [RESPValue]?? {
        guard depth < limits.maximumDepth else {
            throw Self.violation("replies nest deeper than \(limits.maximumDepth) levels")
        }
        guard let header = try length(allowsNull: allowsNull, maximum: limits.maximumAggregateCount, what: "aggregate")
        else { return nil }
        guard let count = header else { return .some(nil) }
        var elements: [RESPValue] = []
        // Reserve only what the bytes present can hold (3 bytes per element at least), not the claim.
        elements.reserveCapacity(min(count, (bytes.count - position) / 3))
        for _ in 0..<count {
            guard let element = try value(depth: depth + 1) else { return nil }
            elements.append(element)
        }
        return .some(elements)
    }

    /// `<count>\r\n` and that many key–value pairs one level deeper.
    private mutating func pairs(depth: Int) throws(RedisError) -> [RESPValue.Pair]? {
        guard depth < limits.maximumDepth else {
            throw Self.violation("replies nest deeper than \(limits.maximumDepth) levels")
        }
        guard let header = try length(allowsNull: false, maximum: limits.maximumAggregateCount, what: "map"),
            let count = header
        else { return nil }
        var pairs: [RESPValue.Pair] = []
        pairs.reserveCapacity(min(count, (bytes.count - position) / 6))
        for _ in 0..<count {
            guard let key = try value(depth: depth + 1), let value = try value(depth: depth + 1) else { return nil }
            pairs.append(RESPValue.Pair(key: key, value: value))
        }
        return pairs
    }

    // MARK: - Numbers

    private static func integer(_ text: ArraySlice<UInt8>) throws(RedisError) -> Int64 {
        guard let value = Int64(String(decoding: text, as: UTF8.self)) else {
            throw violation("an integer (:) is not a signed 64-bit decimal")
        }
        return value
    }

    private static func double(_ text: ArraySlice<UInt8>) throws(RedisError) -> Double {
        let string = String(decoding: text, as: UTF8.self)
        switch string {
        case "inf", "+inf": return .infinity
        case "-inf": return -.infinity
        case "nan", "-nan": return .nan
        default: break
        }
        let allowed = Set("0123456789+-.eE".utf8)
        guard !text.isEmpty, text.allSatisfy(allowed.contains), let value = Double(string), value.isFinite else {
            throw violation("a double (,) is not a decimal number, inf, -inf or nan")
        }
        return value
    }

    private static func bigNumber(_ text: ArraySlice<UInt8>) throws(RedisError) -> String {
        let digits = text.first == UInt8(ascii: "-") || text.first == UInt8(ascii: "+") ? text.dropFirst() : text
        guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            throw violation("a big number (() is not a decimal integer")
        }
        return String(decoding: text, as: UTF8.self)
    }

    private static func violation(_ message: String) -> RedisError {
        RedisError(.protocolViolation, message)
    }
}

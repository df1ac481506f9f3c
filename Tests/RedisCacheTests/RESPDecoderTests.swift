import Testing

@testable import RedisCache

/// The RESP3 decoder against hand-made frames of every type, each fed whole and split at every byte.
/// Frames follow https://github.com/redis/redis-specifications/blob/master/protocol/RESP3.md.
@Suite struct RESPDecoderTests {
    static let frames: [(String, RESPValue)] = [
        ("+OK\r\n", .simpleString("OK")),
        ("-ERR unknown command\r\n", .simpleError("ERR unknown command")),
        (":-42\r\n", .integer(-42)),
        (":9223372036854775807\r\n", .integer(.max)),
        ("$5\r\nhe\r\no\r\n", .bulkString(Array("he\r\no".utf8))),
        ("$0\r\n\r\n", .bulkString([])),
        ("$-1\r\n", .null),
        ("*-1\r\n", .null),
        ("_\r\n", .null),
        ("#t\r\n", .boolean(true)),
        ("#f\r\n", .boolean(false)),
        (",1.5e3\r\n", .double(1500)),
        (",-inf\r\n", .double(-.infinity)),
        ("(3492890328409238509324850943850943825024385\r\n", .bigNumber("3492890328409238509324850943850943825024385")),
        ("!21\r\nSYNTAX invalid syntax\r\n", .blobError(Array("SYNTAX invalid syntax".utf8))),
        ("=15\r\ntxt:Some string\r\n", .verbatimString(format: "txt", text: Array("Some string".utf8))),
        ("*2\r\n:1\r\n$1\r\nx\r\n", .array([.integer(1), .bulkString([0x78])])),
        ("*0\r\n", .array([])),
        (
            "%2\r\n+first\r\n:1\r\n+second\r\n*1\r\n_\r\n",
            .map([
                .init(key: .simpleString("first"), value: .integer(1)),
                .init(key: .simpleString("second"), value: .array([.null])),
            ])
        ),
        ("~2\r\n+a\r\n+b\r\n", .set([.simpleString("a"), .simpleString("b")])),
        (
            "|1\r\n+ttl\r\n:3\r\n:7\r\n",
            .attribute([.init(key: .simpleString("ttl"), value: .integer(3))], .integer(7))
        ),
        (
            ">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\nkey\r\n",
            .push([.bulkString(Array("invalidate".utf8)), .array([.bulkString(Array("key".utf8))])])
        ),
    ]

    @Test(arguments: 0..<frames.count)
    func decodesEveryTypeSplitAtEveryByte(index: Int) throws {
        let (text, expected) = Self.frames[index]
        let bytes = Array(text.utf8)
        for split in 0...bytes.count {
            // Given the frame in two pieces
            var decoder = RESPDecoder()
            decoder.append(bytes[0..<split])
            // When the first piece is decoded, it is incomplete (unless it is the whole frame)
            let first = try decoder.next()
            if split < bytes.count {
                #expect(first == nil, "split at \(split) of \(text.debugDescription)")
                decoder.append(bytes[split...])
                #expect(try decoder.next() == expected, "split at \(split)")
            } else {
                #expect(first == expected)
            }
            // Then nothing is left over
            #expect(decoder.bufferedByteCount == 0)
            #expect(try decoder.next() == nil)
        }
    }

    @Test func decodesPipelinedRepliesInOrderFedOneByteAtATime() throws {
        let stream = Self.frames.map(\.0).joined()
        var decoder = RESPDecoder()
        var decoded: [RESPValue] = []
        for byte in stream.utf8 {
            decoder.append([byte])
            while let value = try decoder.next() { decoded.append(value) }
        }
        #expect(decoded.count == Self.frames.count)
        for (value, frame) in zip(decoded, Self.frames) where frame.1 != .double(.nan) {
            #expect(value == frame.1)
        }
    }

    @Test func decodesNaN() throws {
        var decoder = RESPDecoder()
        decoder.append(Array(",nan\r\n".utf8))
        guard case .double(let value)? = try decoder.next() else {
            Issue.record("not a double")
            return
        }
        #expect(value.isNaN)
    }

    static let malformed: [String] = [
        "?\r\n",  // unknown type
        "+OK\n",  // LF without CR
        "+OK\rX",  // CR without LF
        ":12a\r\n",  // not an integer
        ":99999999999999999999\r\n",  // overflows Int64
        ":\r\n",  // empty integer
        "$5\r\nhelloXY",  // no CRLF after the blob
        "$-2\r\n",  // negative length
        "$+5\r\nhello\r\n",  // signed length
        "$05\r\nhello\r\n",  // padded length
        "$\r\n",  // empty length
        "$?\r\n",  // streamed string
        "*?\r\n",  // streamed aggregate
        "!-1\r\n",  // null blob error
        "=3\r\ntxt\r\n",  // verbatim without colon
        "=4\r\ntxt;\r\n",  // verbatim with the wrong separator
        "#x\r\n",  // boolean neither t nor f
        "_x\r\n",  // null with payload
        ",1.2.3\r\n",  // not a double
        ",0x1p3\r\n",  // hex double
        "(12-3\r\n",  // not a big number
        "%-1\r\n",  // null map
        "~-1\r\n",  // null set
    ]

    @Test(arguments: malformed)
    func rejectsMalformedFramesWithATypedError(text: String) {
        var decoder = RESPDecoder()
        decoder.append(Array(text.utf8))
        #expect(throws: RedisError.self) { _ = try decoder.next() }
        // The decoder stays failed: the stream cannot be framed again.
        #expect(throws: RedisError.self) { _ = try decoder.next() }
    }

    @Test func rejectsABulkOverTheLimitBeforeItsBytesArrive() {
        var decoder = RESPDecoder(limits: .init(maximumBulkLength: 1024))
        decoder.append(Array("$1025\r\n".utf8))
        let error = #expect(throws: RedisError.self) { _ = try decoder.next() }
        #expect(error?.code == .protocolViolation)
    }

    @Test func acceptsABulkAtTheLimit() throws {
        var decoder = RESPDecoder(limits: .init(maximumBulkLength: 4))
        decoder.append(Array("$4\r\nabcd\r\n".utf8))
        #expect(try decoder.next() == .bulkString(Array("abcd".utf8)))
    }

    @Test func rejectsAHugeAggregateClaimWithoutAllocatingIt() throws {
        // Given a claim of 2^40 elements (over the count cap) and one within it but with no elements yet
        var over = RESPDecoder()
        over.append(Array("*1099511627776\r\n".utf8))
        #expect(throws: RedisError.self) { _ = try over.next() }
        var within = RESPDecoder()
        within.append(Array("*1048576\r\n".utf8))
        // Then the second is merely incomplete
        #expect(try within.next() == nil)
    }

    @Test func rejectsNestingDeeperThanTheLimit() throws {
        var decoder = RESPDecoder(limits: .init(maximumDepth: 3))
        decoder.append(Array("*1\r\n*1\r\n*1\r\n:1\r\n".utf8))
        #expect(try decoder.next() == .array([.array([.array([.integer(1)])])]))
        decoder.append(Array("*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n".utf8))
        #expect(throws: RedisError.self) { _ = try decoder.next() }
    }

    /// Every kind of aggregate counts toward the depth, its elements one level below it: arrays are in
    /// `rejectsNestingDeeperThanTheLimit`; here maps (keys and values), sets, pushes and attributes.
    static let nestedFourDeep: [(String, String)] = [
        ("map values", "%1\r\n+k\r\n%1\r\n+k\r\n%1\r\n+k\r\n%1\r\n+k\r\n:1\r\n"),
        ("map keys", "%1\r\n%1\r\n%1\r\n%1\r\n+k\r\n:1\r\n:1\r\n:1\r\n:1\r\n"),
        ("sets", "~1\r\n~1\r\n~1\r\n~1\r\n:1\r\n"),
        ("pushes", ">1\r\n>1\r\n>1\r\n>1\r\n:1\r\n"),
        ("attributes", "|1\r\n+a\r\n|1\r\n+a\r\n|1\r\n+a\r\n|1\r\n+a\r\n:1\r\n:1\r\n:1\r\n:1\r\n:1\r\n"),
    ]

    @Test(arguments: 0..<nestedFourDeep.count)
    func rejectsEveryAggregateKindNestedDeeperThanTheLimit(index: Int) throws {
        // Given a limit of 3 levels and four nested aggregates of one kind, complete on the wire
        let (kind, text) = Self.nestedFourDeep[index]
        var decoder = RESPDecoder(limits: .init(maximumDepth: 3))
        decoder.append(Array(text.utf8))
        // Then the depth cap refuses it (not a later check), naming the limit
        let error = #expect(throws: RedisError.self, "\(kind)") { _ = try decoder.next() }
        #expect(error?.message.contains("nest deeper than 3") == true, "\(kind): \(error.map { "\($0)" } ?? "")")
    }

    @Test func acceptsMapsNestedUpToTheLimit() throws {
        var decoder = RESPDecoder(limits: .init(maximumDepth: 2))
        decoder.append(Array("%1\r\n+k\r\n%1\r\n+j\r\n:1\r\n".utf8))
        let inner = RESPValue.map([.init(key: .simpleString("j"), value: .integer(1))])
        #expect(try decoder.next() == .map([.init(key: .simpleString("k"), value: inner)]))
    }

    /// A blob's trailing CRLF is checked byte by byte: a CR followed by something else, or the reverse.
    @Test(arguments: ["$5\r\nhello\rX", "$5\r\nhello\nX", "!3\r\nERR\rX", "=7\r\ntxt:abc\rX"])
    func rejectsABlobNotFollowedByAFullCRLF(text: String) throws {
        var decoder = RESPDecoder()
        decoder.append(Array(text.utf8))
        let error = #expect(throws: RedisError.self) { _ = try decoder.next() }
        #expect(error?.message.contains("not followed by CRLF") == true, "\(error.map { "\($0)" } ?? "")")
    }

    @Test func rejectsABulkOverTheLimitWhoseBytesHaveAllArrivedByItsLength() throws {
        // Given a blob one byte over the cap, every byte of it present
        var decoder = RESPDecoder(limits: .init(maximumBulkLength: 8))
        decoder.append(Array("$9\r\n123456789\r\n".utf8))
        // Then it is refused for its length
        let error = #expect(throws: RedisError.self) { _ = try decoder.next() }
        #expect(error?.message.contains("exceeds the limit of 8") == true)
    }

    @Test(arguments: ["$9999999999999999999\r\n", "*9999999999999999999\r\n", "%9223372036854775808\r\n"])
    func rejectsALengthThatOverflowsWithoutCrashing(text: String) throws {
        // Given 19-digit lengths past Int.max (a corrupt or hostile stream)
        var decoder = RESPDecoder()
        decoder.append(Array(text.utf8))
        // Then they are a protocol violation, never an arithmetic trap
        let error = #expect(throws: RedisError.self) { _ = try decoder.next() }
        #expect(error?.code == .protocolViolation)
    }

    @Test func rejectsAnOverlongLineBeforeItsEnd() throws {
        var decoder = RESPDecoder(limits: .init(maximumLineLength: 8))
        decoder.append(Array("+12345678".utf8))
        #expect(try decoder.next() == nil)
        decoder.append(Array("9".utf8))
        #expect(throws: RedisError.self) { _ = try decoder.next() }
    }

    @Test func rejectsAnIncompleteFrameOverTheFrameLimit() throws {
        var decoder = RESPDecoder(limits: .init(maximumFrameLength: 64))
        decoder.append(Array(("*100\r\n" + String(repeating: ":1\r\n", count: 20)).utf8))
        #expect(throws: RedisError.self) { _ = try decoder.next() }
    }
}

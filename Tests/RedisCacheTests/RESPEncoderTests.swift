import Testing

@testable import RedisConnection

@Suite struct RESPEncoderTests {
    @Test func encodesACommandAsAnArrayOfBulkStrings() {
        let bytes = RESPEncoder.encode(RESPCommand("SET", "k", "", "PX", "100"))
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == "*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n$2\r\nPX\r\n$3\r\n100\r\n")
    }

    @Test func keepsBinaryArgumentsIntact() throws {
        // Given an argument holding CRLF and every byte value
        let binary = (0...255).map(UInt8.init)
        var command = RESPCommand("SET", "k")
        command.append(binary)
        // When it is encoded, then decoding the encoding as a reply gives the same bytes back
        var decoder = RESPDecoder()
        decoder.append(RESPEncoder.encode(command))
        #expect(
            try decoder.next() == .array([.bulkString(Array("SET".utf8)), .bulkString([0x6B]), .bulkString(binary)]))
    }

    @Test(arguments: [0, 1, 9, 10, 11, 99, 100, 999, 1000, 4096, 65_535, 1 << 20])
    func writesEveryLengthInDecimal(length: Int) throws {
        // Given an argument of `length` bytes (digit counts change at each power of ten)
        var command = RESPCommand("SET")
        command.append([UInt8](repeating: 0x61, count: length))
        // When it is encoded, then its length prefix is the decimal count and the frame decodes back
        let bytes = RESPEncoder.encode(command)
        let prefix = Array("*2\r\n$3\r\nSET\r\n$\(length)\r\n".utf8)
        #expect(Array(bytes.prefix(prefix.count)) == prefix)
        #expect(bytes.count == prefix.count + length + 2)
        var decoder = RESPDecoder(limits: RESPDecoder.Limits(maximumBulkLength: 2 << 20))
        decoder.append(bytes)
        #expect(try decoder.next() == .array([.bulkString(Array("SET".utf8)), .bulkString(command.arguments[1])]))
    }
}

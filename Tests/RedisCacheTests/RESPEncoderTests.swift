import Testing

@testable import RedisCache

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
}

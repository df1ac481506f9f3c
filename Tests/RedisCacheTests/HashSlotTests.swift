import Testing

@testable import RedisConnection

@Suite struct HashSlotTests {
    @Test func checksumOfTheStandardCheckInputIs0x31C3() {
        // CRC-16/XMODEM's published check value
        let check = Array("123456789".utf8)
        #expect(check.withUnsafeBufferPointer { HashSlot.crc16($0) } == 0x31C3)
        #expect(HashSlot(key: check).rawValue == 0x31C3 & 0x3FFF)
    }

    /// Slots `CLUSTER KEYSLOT` returned on redis-server 7.0.15 (the first two are the examples of the
    /// command's documentation).
    @Test(arguments: [
        ("somekey", 11058), ("foo{hash_tag}", 2515), ("foo", 12182), ("bar", 5061), ("hello", 866),
        ("{}", 15257), ("{}a", 10875), ("a{b", 13340), ("a{{b}}c", 6215), ("{a}{b}", 15495), ("x{}{y}", 14166),
    ])
    func matchesTheServersSlot(key: String, slot: Int) {
        #expect(HashSlot(key: key).rawValue == slot)
    }

    @Test func hashesOnlyANonEmptyTagBetweenTheFirstOpeningAndTheNextClosingBrace() {
        // A tag: only its contents count, wherever it sits and whatever surrounds it
        #expect(HashSlot(key: "user:{42}:name") == HashSlot(key: "42"))
        #expect(HashSlot(key: "{42}") == HashSlot(key: "42"))
        #expect(HashSlot(key: "{a}{b}") == HashSlot(key: "a"))
        // Nested: from the first `{` to the next `}`, so the tag is `{b`
        #expect(HashSlot(key: "a{{b}}c") == HashSlot(key: "{b"))
        // No tag: an empty one, or `{` without a later `}`, hashes the whole key
        #expect(HashSlot(key: "x{}{y}") != HashSlot(key: "y"))
        #expect(HashSlot(key: "a}{b").rawValue == 0x3FFF & crc16("a}{b"))
        #expect(HashSlot(key: "a{b").rawValue == 0x3FFF & crc16("a{b"))
    }

    @Test func hashesBinaryKeysByteForByte() {
        // Invalid UTF-8 and zero bytes are hashed as they are, tag rules included
        let key: [UInt8] = [0xFF, 0x00, UInt8(ascii: "{"), 0x80, 0x00, UInt8(ascii: "}"), 0xFE]
        #expect(HashSlot(key: key) == HashSlot(key: [0x80, 0x00]))
        #expect(HashSlot(key: [UInt8]()).rawValue == 0)
    }

    @Test func acceptsOnlySlotNumbersInsideTheCluster() {
        #expect(HashSlot(rawValue: 0)?.rawValue == 0)
        #expect(HashSlot(rawValue: 16_383)?.rawValue == 16_383)
        #expect(HashSlot(rawValue: 16_384) == nil)
        #expect(HashSlot(rawValue: -1) == nil)
    }

    private func crc16(_ text: String) -> Int {
        Int(Array(text.utf8).withUnsafeBufferPointer { HashSlot.crc16($0) })
    }
}

import CacheCore
import Foundation
import SealedRecord
import Testing

/// The tag block's bytes and the one tag rule every sealing tier follows (Docs/Tags.md, "The tag rule").
@Suite struct TagBlockTests {
    // MARK: - Known layouts

    @Test func encodesCountThenEachTagInByteOrderOfItsName() throws {
        // Given tags whose byte order differs from the order they were given in, the empty tag among them
        let block = try TagBlock.encode(["b": 0x0102, "": 7, "a": 1])

        // Then: count 3, then "" (length 0), "a", "b", each with its 64-bit version, all big-endian
        let expected: [UInt8] =
            [0x00, 0x03]
            + [0x00, 0x00] + [0, 0, 0, 0, 0, 0, 0, 7]
            + [0x00, 0x01, 0x61] + [0, 0, 0, 0, 0, 0, 0, 1]
            + [0x00, 0x01, 0x62] + [0, 0, 0, 0, 0, 0, 0x01, 0x02]
        #expect(Array(block) == expected)
    }

    @Test func ordersByTheCanonicalBytesOfTheNames() throws {
        // A decomposed "é" is written as U+00E9 (C3 A9), so it sorts after "f" (66), as its canonical bytes do;
        // earlier builds wrote its decomposed bytes (65 CC 81) first. Readers never depended on the order (Redis
        // builds wrote String order); one order makes one stamp one byte string.
        let block = Array(try TagBlock.encode(["f": 1, "e\u{301}": 2]))
        #expect(block[2...4] == [0x00, 0x01, 0x66])
        #expect(block[13...16] == [0x00, 0x02, 0xC3, 0xA9])
    }

    // MARK: - One tag, one spelling

    @Test func writesEachTagInItsCanonicalNFCForm() throws {
        // Given "é" decomposed (65 CC 81), which Swift compares equal to the composed U+00E9
        let decomposed = "cafe\u{301}"

        // When a block is written for it
        let block = Array(try TagBlock.encode([decomposed: 2]))

        // Then it holds the NFC bytes, the same block as for the composed spelling
        #expect(block[2...3] == [0x00, 0x05])
        #expect(Array(block[4...8]) == Array("caf\u{E9}".utf8))
        #expect(block == Array(try TagBlock.encode(["caf\u{E9}": 2])))
        #expect(TagBlock.canonicalBytes(of: decomposed) == Data("caf\u{E9}".utf8))
    }

    @Test func aNameNotInNFCIsAStampThatIsNeverCurrent() throws {
        // Given a block an earlier build wrote for the decomposed spelling, stamped with version 7
        let bytes: [UInt8] = [0x00, 0x01, 0x00, 0x03, 0x65, 0xCC, 0x81, 0, 0, 0, 0, 0, 0, 0, 7]

        // When it is decoded
        let decoded = try #require(TagBlock.decode(Data(bytes)))

        // Then the tag comes back with a version no counter holds, so the record is fenced even against a
        // counter at 7 (the counter it was read from was named by other bytes, which no removal reaches now)
        #expect(decoded.versions == ["\u{E9}": FenceCounter.neverCurrent])
        let stamp = RecordStamp(epoch: 1, expiresAt: nil, staleUntil: nil, tagVersions: decoded.versions)
        #expect(stamp.liveness(currentEpoch: 1, currentTagVersions: ["\u{E9}": 7], at: Date()) == .fencedByTag)
    }

    @Test(arguments: [true, false])
    func aBlockWithBothSpellingsOfATagIsFencedNotCorrupt(composedFirst: Bool) throws {
        // Given a block naming "é" composed (C3 A9) and decomposed (65 CC 81), each with a version
        let composed: [UInt8] = [0x00, 0x02, 0xC3, 0xA9, 0, 0, 0, 0, 0, 0, 0, 1]
        let decomposed: [UInt8] = [0x00, 0x03, 0x65, 0xCC, 0x81, 0, 0, 0, 0, 0, 0, 0, 2]
        let bytes = [0x00, 0x02] + (composedFirst ? composed + decomposed : decomposed + composed)

        // When it is decoded, it is no duplicate (the bytes differ), but the tag can never be current again
        let decoded = try #require(TagBlock.decode(Data(bytes)))
        #expect(decoded.versions == ["\u{E9}": FenceCounter.neverCurrent])
    }

    @Test func anEmptyStampEncodesAsACountOfZero() throws {
        #expect(Array(try TagBlock.encode([:])) == [0, 0])
    }

    @Test func decodesItsOwnBlockAndLeavesTheValueAfterIt() throws {
        // Given a block for three tags, the empty one included, followed by value bytes
        let versions: [String: UInt64] = ["": 9, "account:7": .max, "café": 0]
        let bytes = try TagBlock.encode(versions) + Data("value".utf8)

        // When it is decoded
        let decoded = try #require(TagBlock.decode(bytes))

        // Then the stamps and the value come back exactly
        #expect(decoded.versions == versions)
        #expect(decoded.value == Data("value".utf8))
    }

    @Test func keepsALeadingByteOrderMarkInATagName() throws {
        // Given tags that differ only by a leading U+FEFF (Foundation's UTF-8 decoder on Linux drops it)
        let versions: [String: UInt64] = ["\u{FEFF}x": 1, "x": 2]

        // When their block is decoded
        let decoded = try #require(TagBlock.decode(try TagBlock.encode(versions)))

        // Then both come back, each with its own version
        #expect(decoded.versions == versions)
    }

    @Test func decodesABlockThatIsNotAtTheStartOfItsData() throws {
        // A slice of a larger buffer (as a value cut out of a decrypted record) has a non-zero start index.
        let whole = Data([0xFF, 0xFF]) + (try TagBlock.encode(["t": 5])) + Data([0x2A])
        let decoded = try #require(TagBlock.decode(whole[2...]))
        #expect(decoded.versions == ["t": 5])
        #expect(decoded.value == Data([0x2A]))
    }

    @Test func decodesTheOrderEarlierRedisBuildsWrote() {
        // "b" before "a": an envelope sealed by an earlier build in whatever order it chose still reads.
        let bytes: [UInt8] =
            [0x00, 0x02, 0x00, 0x01, 0x62, 0, 0, 0, 0, 0, 0, 0, 2, 0x00, 0x01, 0x61, 0, 0, 0, 0, 0, 0, 0, 1, 0xEE]
        let decoded = TagBlock.decode(Data(bytes))
        #expect(decoded?.versions == ["a": 1, "b": 2])
        #expect(decoded?.value == Data([0xEE]))
    }

    @Test(
        arguments: [
            ("count only", [0x00]),
            ("tag runs past the end", [0x00, 0x01, 0x00, 0x05, 0x61]),
            ("version cut short", [0x00, 0x01, 0x00, 0x01, 0x61, 0, 0, 0]),
            (
                "a tag twice",
                [0x00, 0x02, 0x00, 0x01, 0x61, 0, 0, 0, 0, 0, 0, 0, 1, 0x00, 0x01, 0x61, 0, 0, 0, 0, 0, 0, 0, 2]
            ),
            ("a name that is not UTF-8", [0x00, 0x01, 0x00, 0x01, 0xFF, 0, 0, 0, 0, 0, 0, 0, 1]),
        ] as [(String, [UInt8])])
    func refusesAMalformedBlock(_ label: String, _ bytes: [UInt8]) {
        #expect(TagBlock.decode(Data(bytes)) == nil, "\(label)")
    }

    // MARK: - The tag rule

    @Test func acceptsTheEmptyTagAndOneOfExactlyTheLimit() throws {
        try TagBlock.validate("")
        try TagBlock.validate(String(repeating: "x", count: TagBlock.maximumTagLength))
        let longest = String(repeating: "x", count: TagBlock.maximumTagLength)
        let decoded = TagBlock.decode(try TagBlock.encode([longest: 1, "": 2]))
        #expect(decoded?.versions == [longest: 1, "": 2])
    }

    @Test func refusesATagOneByteOverTheLimitWithInvalidArgument() {
        // 65,535 bytes of "x" plus a two-byte "é": over by 2 in UTF-8 bytes though only one character longer
        let tag = String(repeating: "x", count: TagBlock.maximumTagLength - 1) + "é"
        #expect(tag.utf8.count == TagBlock.maximumTagLength + 1)
        let error = #expect(throws: CacheError.self) { try TagBlock.validate(tag) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("65536 bytes") == true)
        let encodeError = #expect(throws: CacheError.self) { try TagBlock.encode([tag: 1, "ok": 2]) }
        #expect(encodeError?.code == .invalidArgument)
    }

    @Test func refusesMoreTagsThanTheCountFieldHolds() {
        let tags = (0...TagBlock.maximumTagCount).map(String.init)
        let error = #expect(throws: CacheError.self) { try TagBlock.validate(tags) }
        #expect(error?.code == .invalidArgument)
        #expect(throws: Never.self) { try TagBlock.validate(tags.dropLast()) }
    }
}

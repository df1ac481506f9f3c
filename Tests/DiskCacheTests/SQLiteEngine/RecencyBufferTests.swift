import Testing

@testable import DiskCache

/// The SQLite engine's buffer of accesses not yet written, found by the first 64 bits of a row's name.
@Suite struct RecencyBufferTests {
    let tail = String(repeating: "c", count: 48)

    @Test func aSlotIsTheFirstSixteenHexDigitsOfTheName() {
        #expect(RecencyBuffer.slot(of: "0000000000000001" + tail) == 1)
        #expect(RecencyBuffer.slot(of: "00000000000000af" + tail) == 0xAF)
        #expect(RecencyBuffer.slot(of: "ffffffffffffffff" + tail) == .max)
    }

    @Test func theLastAccessOfANameIsKeptAndTakingEmptiesTheBuffer() {
        var buffer = RecencyBuffer()
        let one = "0123456789abcdef" + tail
        let two = "fedcba9876543210" + tail
        buffer.note(one, at: 10)
        buffer.note(two, at: 20)
        buffer.note(one, at: 30)

        let taken = buffer.takeAll().sorted { $0.name < $1.name }

        #expect(taken.map(\.name) == [one, two])
        #expect(taken.map(\.accessed) == [30, 20])
        #expect(buffer.isEmpty)
    }

    @Test func namesSharingTheirFirstSixtyFourBitsKeepOnlyTheLaterAccess() {
        var buffer = RecencyBuffer()
        let earlier = "0123456789abcdef" + String(repeating: "1", count: 48)
        let later = "0123456789abcdef" + String(repeating: "2", count: 48)
        buffer.note(earlier, at: 1)
        buffer.note(later, at: 2)

        let taken = buffer.takeAll()

        #expect(taken.count == 1)
        #expect(taken.first?.name == later)
        #expect(taken.first?.accessed == 2)
    }
}

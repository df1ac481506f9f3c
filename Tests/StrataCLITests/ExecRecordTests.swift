import Foundation
import Testing

@testable import strata

@Suite struct ExecRecordTests {
    @Test func aRecordBuiltInItsOutputsBufferReadsBackFieldForField() throws {
        // Given outputs, one of them a slice that does not start at index 0
        let backing = Data("..stdout bytes".utf8)
        let standardOutput = backing[2...]
        let standardError = Data("stderr".utf8)
        let freshUntil = Date(timeIntervalSince1970: 1_700_000_000.5)

        // When a record is serialized and read back
        let bytes = ExecRecord.serialize(
            status: -3, freshUntil: freshUntil, standardOutput: standardOutput, standardError: standardError)
        let record = try #require(ExecRecord(serialized: bytes))

        // Then every field is the same, and the source buffer is untouched
        #expect(record.status == -3)
        #expect(record.freshUntil == freshUntil)
        #expect(record.standardOutput == Data("stdout bytes".utf8))
        #expect(record.standardError == standardError)
        #expect(backing == Data("..stdout bytes".utf8))
        #expect(bytes.count == 4 + 4 + 1 + 8 + 8 + 12 + 8 + 6)
        // and a record cut short is not a record
        #expect(ExecRecord(serialized: bytes.dropLast()) == nil)
    }
}

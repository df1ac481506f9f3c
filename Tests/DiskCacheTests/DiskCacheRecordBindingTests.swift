import CacheCrypto
import Foundation
import Testing

@testable import DiskCache

/// Entry files sealed through the sealed-record kernel still carry exactly the associated data
/// Docs/DiskFormat.md specifies (the 52 header bytes, then the file name), checked by opening a record with
/// associated data built here by hand, independently of the kernel: stores written by earlier builds keep
/// reading, and records written now read in earlier builds.
@Suite struct DiskCacheRecordBindingTests {
    /// Opens `file` with AES-GCM under `associatedData`, returning key and value bytes, or `nil` when the
    /// tag does not verify.
    private func open(_ file: Data, associatedData: Data, keyLength: Int, fixture: RecordFixture) throws -> Data? {
        let bodyLength = file.count - EntryRecord.overhead
        var plaintext = Data(count: bodyLength)
        let start = EntryRecord.headerSize + EntryRecord.nonceSize
        do {
            try file.withUnsafeBytes { bytes in
                try associatedData.withUnsafeBytes { ad in
                    try plaintext.withUnsafeMutableBytes { output in
                        try fixture.epoch.sealingSubkey.open(
                            nonce: UnsafeRawBufferPointer(rebasing: bytes[EntryRecord.headerSize..<start]),
                            associatedData: ad,
                            ciphertext: UnsafeRawBufferPointer(rebasing: bytes[start..<start + bodyLength]),
                            tag: UnsafeRawBufferPointer(rebasing: bytes[(start + bodyLength)...]),
                            first: UnsafeMutableRawBufferPointer(rebasing: output[..<keyLength]),
                            second: UnsafeMutableRawBufferPointer(rebasing: output[keyLength...]))
                    }
                }
            }
        } catch CryptoFailure.authenticationFailed {
            return nil
        }
        return plaintext
    }

    @Test func aRecordOpensWithTheHeaderThenTheFileNameAsAssociatedData() throws {
        // Given a record sealed for a file name through the kernel's builder
        let fixture = try RecordFixture()
        let file = try fixture.seal(fileName: RecordFixture.nameA)
        let header = file.prefix(EntryRecord.headerSize)
        let keyLength = RecordFixture.keyBytes.count

        // When it is opened with the documented associated data, and with the name left out
        let documented = try open(
            file, associatedData: header + Data(RecordFixture.nameA.utf8), keyLength: keyLength, fixture: fixture)
        let withoutName = try open(file, associatedData: Data(header), keyLength: keyLength, fixture: fixture)

        // Then the documented bytes open it to the key and value sealed, and nothing shorter does
        #expect(documented == RecordFixture.keyBytes + Data((0..<40).map { UInt8($0) }))
        #expect(withoutName == nil)
    }
}

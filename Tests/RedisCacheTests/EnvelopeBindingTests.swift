import CacheCrypto
import Foundation
import Testing

@testable import RedisCache

/// Envelopes sealed through the sealed-record kernel still carry exactly the associated data
/// Docs/RedisCache.md specifies (the header, the namespace's length byte and bytes, the Redis key name),
/// checked by opening an envelope with associated data built here by hand, independently of the kernel: data
/// written by earlier builds keeps opening, and envelopes written now open in earlier builds.
@Suite struct EnvelopeBindingTests {
    /// Opens `bytes` (a header of `headerCount` bytes) under `associatedData`; the plaintext, or `nil` when
    /// the tag does not verify.
    private func open(
        _ bytes: [UInt8], headerCount: Int, associatedData: [UInt8], keys: NamespaceKeys
    ) throws
        -> [UInt8]?
    {
        let start = headerCount + Envelope.nonceByteCount
        let count = bytes.count - start - Envelope.tagByteCount
        var plaintext = [UInt8](repeating: 0, count: count)
        do {
            try bytes.withUnsafeBytes { buffer in
                try associatedData.withUnsafeBytes { ad in
                    try plaintext.withUnsafeMutableBytes { output in
                        try keys.sealing.open(
                            nonce: UnsafeRawBufferPointer(rebasing: buffer[headerCount..<start]), associatedData: ad,
                            ciphertext: UnsafeRawBufferPointer(rebasing: buffer[start..<start + count]),
                            tag: UnsafeRawBufferPointer(rebasing: buffer[(start + count)...]),
                            first: UnsafeMutableRawBufferPointer(rebasing: output[..<4]),
                            second: UnsafeMutableRawBufferPointer(rebasing: output[4...]))
                    }
                }
            }
        } catch CryptoFailure.authenticationFailed {
            return nil
        }
        return plaintext
    }

    @Test(arguments: [false, true])
    func anEnvelopeOpensWithTheDocumentedAssociatedData(withStaleUntil: Bool) throws {
        // Given an envelope sealed through the kernel's builder (26-byte header, or 34 with a stale-until)
        let keys = try EnvelopeTests.keys()
        var header = EnvelopeTests.header
        if withStaleUntil { header.staleUntil = header.expiresAt?.addingTimeInterval(60) }
        let (bytes, name) = try EnvelopeTests.seal(Data("payload".utf8), header: header, keys: keys)
        let headerCount = withStaleUntil ? Envelope.staleHeaderByteCount : Envelope.headerByteCount
        let namespace = Array(keys.namespace.utf8)

        // When it is opened with the documented associated data, and with the namespace's length byte left out
        let documented = try open(
            bytes, headerCount: headerCount,
            associatedData: Array(bytes[..<headerCount]) + [UInt8(namespace.count)] + namespace + name, keys: keys)
        let withoutLength = try open(
            bytes, headerCount: headerCount, associatedData: Array(bytes[..<headerCount]) + namespace + name,
            keys: keys)

        // Then the documented bytes open it to the key's length, the key and the value; nothing else does
        let key = Array(EnvelopeTests.keyBytes)
        #expect(documented == [0, 0, 0, UInt8(key.count)] + key + Array("payload".utf8))
        #expect(withoutLength == nil)
    }
}

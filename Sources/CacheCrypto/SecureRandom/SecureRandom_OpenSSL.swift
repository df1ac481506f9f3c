#if !canImport(CryptoKit)
import COpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Random bytes on Linux: libcrypto's `RAND_bytes`, OpenSSL's seeded CSPRNG. The interface is SecureRandom.swift.

extension OpenSSLBackend {
    /// Returns bytes from `RAND_bytes`; see ``SecureRandomPrimitive/randomBytes(count:)``.
    package static func randomBytes(count: Int) throws -> Data {
        try prepareLibrary()
        try validateRandomByteCount(count)
        guard count > 0 else { return Data() }
        var bytes = Data(count: count)
        let status = bytes.withUnsafeMutableBytes { RAND_bytes(uint8Base($0), Int32(count)) }
        guard status == 1 else { throw libraryFailure("RAND_bytes") }
        return bytes
    }

    /// Fills `buffer` straight from `RAND_bytes`; see ``SecureRandomPrimitive/fillRandom(_:)``.
    ///
    /// - Parameter buffer: The bytes to fill; may be empty.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a buffer over `Int32.max` bytes;
    ///   ``CryptoFailure/backend(_:)`` when the generator fails.
    package static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) throws {
        try prepareLibrary()
        try validateRandomByteCount(buffer.count)
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        guard RAND_bytes(base.assumingMemoryBound(to: UInt8.self), Int32(buffer.count)) == 1 else {
            throw libraryFailure("RAND_bytes")
        }
    }
}
#endif  // !canImport(CryptoKit): Apple platforms use SecureRandom_CryptoKit.swift

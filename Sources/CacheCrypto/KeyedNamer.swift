#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Names cache keys without revealing them: HMAC-SHA-256 (RFC 2104, FIPS 180-4) of a key's canonical bytes
/// (`CacheKey.canonicalBytes`) under a naming subkey (``StoreSubkeys/namingSubkey``).
///
/// Every tier that stores entries under names an observer can see (file names on disk, key names in Redis)
/// names them with this one function, so two tiers agree on what one key is and neither carries its own copy.
/// The same key bytes under the same subkey always give the same name; without the subkey a name says
/// nothing about the key beyond that two operations used the same one.
///
/// Thread safety: immutable; the prepared HMAC subkey may be used from any number of threads at once.
package struct KeyedNamer: Sendable {
    /// The size of a name's MAC in bytes (the full HMAC-SHA-256 output).
    package static let macByteCount = 32

    private let mac: any PreparedHMACSubkey

    /// Prepares `namingSubkey` for the HMAC of every operation.
    ///
    /// - Parameter namingSubkey: The HMAC-SHA-256 subkey, normally 32 bytes from ``StoreSubkeys``.
    /// - Throws: ``CryptoFailure/backend(_:)`` when the crypto library fails.
    package init(namingSubkey: Data) throws {
        mac = try CryptoBackend.prepareHMACSHA256(key: namingSubkey)
    }

    /// Calls `body` with the 32-byte MAC of `keyBytes`; the bytes are valid only inside `body`.
    ///
    /// - Parameters:
    ///   - keyBytes: A cache key's canonical bytes.
    ///   - body: Receives the MAC.
    /// - Returns: What `body` returns.
    /// - Throws: ``CryptoFailure`` when the crypto library fails, or what `body` throws.
    /// - Complexity: O(n) in the size of `keyBytes`.
    package func withMAC<Result>(
        of keyBytes: Data, _ body: (UnsafeRawBufferPointer) throws -> Result
    ) throws -> Result {
        // A tuple on the stack, not a heap buffer: this runs once per cache operation.
        var output = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        try withUnsafeMutableBytes(of: &output) { buffer in
            try keyBytes.withUnsafeBytes { try mac.authenticate($0, into: buffer) }
        }
        return try withUnsafeBytes(of: output, body)
    }

    /// The MAC of `keyBytes` as 64 lower-case hexadecimal digits (a file name, for example).
    ///
    /// - Parameter keyBytes: A cache key's canonical bytes.
    /// - Returns: 64 characters `0-9a-f`.
    /// - Throws: ``CryptoFailure`` when the crypto library fails.
    /// - Complexity: O(n) in the size of `keyBytes`.
    package func hexName(of keyBytes: Data) throws -> String {
        // Not through `withMAC`: this runs on every disk operation, and a generic closure across the module
        // boundary is not specialised.
        var output = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        try withUnsafeMutableBytes(of: &output) { buffer in
            try keyBytes.withUnsafeBytes { try mac.authenticate($0, into: buffer) }
        }
        return withUnsafeBytes(of: output) { bytes in
            String(unsafeUninitializedCapacity: 2 * Self.macByteCount) { text in
                for index in 0..<Self.macByteCount {
                    text[2 * index] = Self.hexDigit(bytes[index] >> 4)
                    text[2 * index + 1] = Self.hexDigit(bytes[index] & 0x0f)
                }
                return 2 * Self.macByteCount
            }
        }
    }

    /// The lower-case hexadecimal digit for a value 0...15.
    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }
}

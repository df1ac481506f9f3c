#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// HMAC-SHA-256 (RFC 2104 with SHA-256 from FIPS 180-4; test vectors in RFC 4231), the platform-free
// interface. The back ends are HMAC_OpenSSL.swift (libcrypto, Linux) and HMAC_CryptoKit.swift (Apple
// platforms).

/// HMAC-SHA-256 as a crypto back end provides it.
///
/// Thread safety: every requirement may be called from any number of threads at once.
package protocol HMACPrimitive {
    /// Computes HMAC-SHA-256 (RFC 2104 with SHA-256 from FIPS 180-4; test vectors in RFC 4231).
    ///
    /// - Parameters:
    ///   - key: The MAC key, any length (the tiers use 32-byte subkeys).
    ///   - data: The message.
    /// - Returns: The 32-byte MAC.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for an input over `Int32.max` bytes;
    ///   ``CryptoFailure/backend(_:)`` when the library fails.
    /// - Complexity: O(n) in the size of `data`.
    static func hmacSHA256(key: Data, data: Data) throws -> Data

    /// Prepares an HMAC-SHA-256 key for many messages (see ``PreparedHMACSubkey``); a default that calls
    /// ``hmacSHA256(key:data:)`` each time is provided.
    ///
    /// - Parameter key: The MAC key, any length.
    /// - Returns: A key usable from any thread.
    /// - Throws: ``CryptoFailure/backend(_:)`` when the library fails.
    static func prepareHMACSHA256(key: Data) throws -> any PreparedHMACSubkey
}

extension HMACPrimitive {
    /// The HMAC-SHA-256 output size in bytes.
    package static var sha256ByteCount: Int { 32 }

    /// Prepares `key` for many HMAC-SHA-256 computations; the fallback calls ``hmacSHA256(key:data:)``.
    ///
    /// - Parameter key: The MAC key, any length.
    /// - Returns: A key usable from any thread.
    /// - Throws: ``CryptoFailure/backend(_:)`` when the library fails.
    package static func prepareHMACSHA256(key: Data) throws -> any PreparedHMACSubkey {
        OneShotHMACSubkey<Self>(key: key)
    }
}

// Keys set up once and used for many operations. A store computes one HMAC per operation (the file name)
// and one AES-GCM seal or open; setting up the library's context for each call cost more than the
// computation itself for small entries (fetching the algorithm, expanding the key, allocating contexts).
// A back end that can keep keyed contexts overrides `prepareHMACSHA256(key:)` and `prepareAESGCM(key:)`;
// the fallbacks below call the one-shot functions, so a back end without a faster path stays correct.

/// An HMAC-SHA-256 key (RFC 2104, FIPS 180-4) ready for many messages.
///
/// Thread safety: every conformer may be used from any number of threads at once.
package protocol PreparedHMACSubkey: Sendable {
    /// Computes HMAC-SHA-256 of `message` into `mac`.
    ///
    /// - Parameters:
    ///   - message: The message; may be empty.
    ///   - mac: Receives the 32-byte MAC; must be exactly 32 bytes.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a wrong output size; ``CryptoFailure/backend(_:)``
    ///   when the library fails.
    /// - Complexity: O(n) in the size of `message`.
    func authenticate(_ message: UnsafeRawBufferPointer, into mac: UnsafeMutableRawBufferPointer) throws
}

/// The fallback ``PreparedHMACSubkey``: the one-shot function on every call.
private struct OneShotHMACSubkey<Provider: HMACPrimitive>: PreparedHMACSubkey {
    let key: Data

    func authenticate(_ message: UnsafeRawBufferPointer, into mac: UnsafeMutableRawBufferPointer) throws {
        guard mac.count == 32 else { throw CryptoFailure.invalidInput("HMAC-SHA-256 output must be 32 bytes") }
        mac.copyBytes(from: try Provider.hmacSHA256(key: key, data: Data(message)))
    }
}

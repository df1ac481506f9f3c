#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// HKDF-SHA-256 (RFC 5869), the platform-free interface. The back ends are HKDF_OpenSSL.swift (libcrypto,
// Linux) and HKDF_CryptoKit.swift (Apple platforms).

/// HKDF-SHA-256 as a crypto back end provides it.
///
/// Thread safety: every requirement may be called from any number of threads at once.
package protocol HKDFPrimitive {
    /// Derives key material with HKDF-SHA-256, extract then expand (RFC 5869).
    ///
    /// - Parameters:
    ///   - inputKey: The input keying material (IKM); must not be empty.
    ///   - salt: The extract salt; empty means the RFC's default of 32 zero bytes.
    ///   - info: The context string that separates one derived key from another; may be empty.
    ///   - outputByteCount: The length of the output in bytes, 1 through 8160 (255 × 32).
    /// - Returns: `outputByteCount` bytes of output keying material (OKM).
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for an empty `inputKey` or an out-of-range length;
    ///   ``CryptoFailure/backend(_:)`` when the library fails.
    static func hkdfSHA256(inputKey: Data, salt: Data, info: Data, outputByteCount: Int) throws -> Data
}

extension HKDFPrimitive {
    /// The largest HKDF-SHA-256 output in bytes, 255 × 32 (RFC 5869 §2.3).
    package static var hkdfSHA256MaxOutputByteCount: Int { 255 * 32 }

    /// Checks an HKDF-SHA-256 call's input key and output length.
    ///
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for an empty input key or a length outside
    ///   1...``hkdfSHA256MaxOutputByteCount``.
    package static func validateHKDF(inputKey: Data, outputByteCount: Int) throws {
        guard !inputKey.isEmpty else {
            throw CryptoFailure.invalidInput("HKDF input key material must not be empty")
        }
        guard (1...hkdfSHA256MaxOutputByteCount).contains(outputByteCount) else {
            throw CryptoFailure.invalidInput(
                "HKDF-SHA-256 output must be 1...\(hkdfSHA256MaxOutputByteCount) bytes, got \(outputByteCount)")
        }
    }
}

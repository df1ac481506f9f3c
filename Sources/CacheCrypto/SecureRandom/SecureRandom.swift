#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Bytes from the system's cryptographically secure random number generator, the platform-free interface.
// The back ends are SecureRandom_OpenSSL.swift (`RAND_bytes`, Linux) and SecureRandom_CryptoKit.swift
// (`SecRandomCopyBytes`, Apple platforms).

/// The system CSPRNG as a crypto back end provides it.
///
/// Thread safety: every requirement may be called from any number of threads at once.
package protocol SecureRandomPrimitive {
    /// Returns bytes from the system's cryptographically secure random number generator.
    ///
    /// - Parameter count: How many bytes, 0 or more.
    /// - Returns: `count` random bytes.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a negative or too large `count`;
    ///   ``CryptoFailure/backend(_:)`` when the generator fails (for example it is not seeded).
    static func randomBytes(count: Int) throws -> Data

    /// Fills `buffer` from the system's cryptographically secure random number generator; a default that
    /// copies from ``randomBytes(count:)`` is provided.
    ///
    /// - Parameter buffer: The bytes to fill; may be empty.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a buffer over `Int32.max` bytes;
    ///   ``CryptoFailure/backend(_:)`` when the generator fails.
    static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) throws
}

extension SecureRandomPrimitive {
    /// Checks a random-byte count.
    ///
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a negative count or one over `Int32.max`.
    package static func validateRandomByteCount(_ count: Int) throws {
        guard count >= 0, count <= Int(Int32.max) else {
            throw CryptoFailure.invalidInput("random byte count must be 0...\(Int32.max), got \(count)")
        }
    }

    /// Fills `buffer` with random bytes; the fallback copies from ``randomBytes(count:)``.
    ///
    /// - Parameter buffer: The bytes to fill; may be empty.
    /// - Throws: What ``randomBytes(count:)`` throws.
    package static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) throws {
        buffer.copyBytes(from: try randomBytes(count: buffer.count))
    }
}

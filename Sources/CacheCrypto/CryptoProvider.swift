// The one crypto interface the tiers' platform-free code calls (the shape of swift-crypto: a platform-free
// API, one back end per platform behind it). The Linux back end (libcrypto EVP, OpenSSL/) and the Apple back
// end (CryptoKit, CryptoKit/) each implement `CryptoProvider`, and the typealias at the end of this file picks
// one, so no other file needs an `#if`.
import Foundation

/// The cryptographic operations Strata's tiers need, all from a vetted library, none hand-written.
///
/// The one-shot requirements are static, stateless functions: each allocates and frees its own library
/// context, so it is safe to call from any thread at once. The `prepare…` requirements return keys set
/// up once for many calls (see PreparedSubkeys.swift); they too may be used from any thread. Inputs of the wrong size are rejected with
/// ``CryptoFailure/invalidInput(_:)`` before the library is called; nothing here traps on bad input.
///
/// Sizes are fixed by ``CryptoProvider`` extension constants (``aesGCMKeyByteCount`` and the like) so
/// callers and back ends agree on them.
package protocol CryptoProvider {
    /// Encrypts and authenticates `plaintext` with AES-256-GCM (NIST SP 800-38D).
    ///
    /// - Parameters:
    ///   - key: The 256-bit key, exactly 32 bytes.
    ///   - nonce: The 96-bit nonce, exactly 12 bytes. Never reuse a nonce under one key.
    ///   - plaintext: The bytes to encrypt; may be empty.
    ///   - associatedData: Bytes authenticated but not encrypted (for example a file header); may be empty.
    /// - Returns: The ciphertext (as long as `plaintext`) and the 16-byte authentication tag.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a wrong key or nonce size or an input too large
    ///   for the library (over `Int32.max` bytes); ``CryptoFailure/backend(_:)`` when the library fails.
    /// - Complexity: O(n) in the size of `plaintext` plus `associatedData`.
    static func sealAESGCM(
        key: Data, nonce: Data, plaintext: Data, associatedData: Data
    ) throws -> (ciphertext: Data, tag: Data)

    /// Checks the tag and decrypts `ciphertext` with AES-256-GCM (NIST SP 800-38D).
    ///
    /// No plaintext is returned unless the tag verifies over the ciphertext and `associatedData`.
    ///
    /// - Parameters:
    ///   - key: The 256-bit key, exactly 32 bytes.
    ///   - nonce: The 96-bit nonce the data was sealed with, exactly 12 bytes.
    ///   - ciphertext: The encrypted bytes; may be empty.
    ///   - tag: The 16-byte tag (truncated tags are refused).
    ///   - associatedData: The associated data given to ``sealAESGCM(key:nonce:plaintext:associatedData:)``.
    /// - Returns: The plaintext.
    /// - Throws: ``CryptoFailure/authenticationFailed`` when the tag does not verify (wrong key, or
    ///   tampered ciphertext, tag, nonce or associated data); ``CryptoFailure/invalidInput(_:)`` for a
    ///   wrong key, nonce or tag size; ``CryptoFailure/backend(_:)`` when the library fails.
    /// - Complexity: O(n) in the size of `ciphertext` plus `associatedData`.
    static func openAESGCM(key: Data, nonce: Data, ciphertext: Data, tag: Data, associatedData: Data) throws -> Data

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

    /// Returns bytes from the system's cryptographically secure random number generator.
    ///
    /// - Parameter count: How many bytes, 0 or more.
    /// - Returns: `count` random bytes.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a negative or too large `count`;
    ///   ``CryptoFailure/backend(_:)`` when the generator fails (for example it is not seeded).
    static func randomBytes(count: Int) throws -> Data

    /// Prepares an HMAC-SHA-256 key for many messages (see ``PreparedHMACSubkey``); a default that calls
    /// ``hmacSHA256(key:data:)`` each time is provided.
    ///
    /// - Parameter key: The MAC key, any length.
    /// - Returns: A key usable from any thread.
    /// - Throws: ``CryptoFailure/backend(_:)`` when the library fails.
    static func prepareHMACSHA256(key: Data) throws -> any PreparedHMACSubkey

    /// Prepares an AES-256-GCM key for many seals and opens (see ``PreparedAESGCMSubkey``); a default that
    /// calls the one-shot functions each time is provided.
    ///
    /// - Parameter key: The 256-bit key, exactly 32 bytes.
    /// - Returns: A key usable from any thread.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a wrong key size; ``CryptoFailure/backend(_:)`` when
    ///   the library fails.
    static func prepareAESGCM(key: Data) throws -> any PreparedAESGCMSubkey

    /// Fills `buffer` from the system's cryptographically secure random number generator; a default that
    /// copies from ``randomBytes(count:)`` is provided.
    ///
    /// - Parameter buffer: The bytes to fill; may be empty.
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a buffer over `Int32.max` bytes;
    ///   ``CryptoFailure/backend(_:)`` when the generator fails.
    static func fillRandom(_ buffer: UnsafeMutableRawBufferPointer) throws
}

/// Why a ``CryptoProvider`` operation failed.
///
/// A tier turns these into `CacheError`s with the context it knows (which file, which key):
/// ``authenticationFailed`` on an entry is `.corruptEntry`, on the key-check record `.wrongMasterKey`;
/// the other cases are `.crypto`.
package enum CryptoFailure: Error, Equatable, CustomStringConvertible {
    /// An AES-GCM tag did not verify: the key is wrong or the data was changed.
    case authenticationFailed
    /// An argument had the wrong size or was out of range; the message says which and what was expected.
    case invalidInput(String)
    /// The crypto library reported an error; the message carries the library's own reason.
    case backend(String)

    /// A one-line reason, for logs and `CacheError` messages.
    package var description: String {
        switch self {
        case .authenticationFailed: return "authentication failed (wrong subkey or altered data)"
        case .invalidInput(let reason): return "invalid input: \(reason)"
        case .backend(let reason): return "crypto library failure: \(reason)"
        }
    }
}

#if canImport(CryptoKit)
package typealias CryptoBackend = CryptoKitBackend
#else
package typealias CryptoBackend = OpenSSLBackend
#endif

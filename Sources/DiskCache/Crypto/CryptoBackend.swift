// INTERFACE SKETCH — the one internal crypto interface DiskCache's platform-free code calls. The Linux
// back end (libcrypto EVP) and the Apple back end (CryptoKit) each live in one file under Crypto/ and
// provide `CryptoBackend` through the typealias below. (To be implemented by the DiskCache work.)
import Foundation

/// The cryptographic operations DiskCache needs, all from a vetted library, none hand-written.
protocol CryptoProvider {
    /// AES-256-GCM seal (NIST SP 800-38D): returns ciphertext and the 16-byte tag.
    static func sealAESGCM(
        key: Data, nonce: Data, plaintext: Data, associatedData: Data
    ) throws -> (ciphertext: Data, tag: Data)
    /// AES-256-GCM open; throws `CryptoFailure.authenticationFailed` when the tag does not verify.
    static func openAESGCM(key: Data, nonce: Data, ciphertext: Data, tag: Data, associatedData: Data) throws -> Data
    /// HMAC-SHA-256 (RFC 2104, FIPS 180-4).
    static func hmacSHA256(key: Data, data: Data) throws -> Data
    /// HKDF-SHA-256 extract-and-expand (RFC 5869).
    static func hkdfSHA256(inputKey: Data, salt: Data, info: Data, outputByteCount: Int) throws -> Data
    /// Cryptographically secure random bytes.
    static func randomBytes(count: Int) throws -> Data
}

enum CryptoFailure: Error, Equatable {
    case authenticationFailed
    case backend(String)
}

#if canImport(CryptoKit)
typealias CryptoBackend = CryptoKitBackend
#else
typealias CryptoBackend = OpenSSLBackend
#endif

import Foundation

// Sizes and argument checks shared by both back ends, so that Linux and Apple platforms reject exactly the
// same inputs with the same messages before any library is called.
extension CryptoProvider {
    /// The AES-256 key size in bytes (256 bits).
    package static var aesGCMKeyByteCount: Int { 32 }
    /// The AES-GCM nonce size in bytes: 96 bits, the size NIST SP 800-38D §5.2.1.1 recommends.
    package static var aesGCMNonceByteCount: Int { 12 }
    /// The AES-GCM tag size in bytes: the full 128 bits; shorter tags are refused.
    package static var aesGCMTagByteCount: Int { 16 }
    /// The HMAC-SHA-256 output size in bytes.
    package static var sha256ByteCount: Int { 32 }
    /// The largest HKDF-SHA-256 output in bytes, 255 × 32 (RFC 5869 §2.3).
    package static var hkdfSHA256MaxOutputByteCount: Int { 255 * 32 }

    /// Checks the key, nonce and (when given) tag sizes for an AES-256-GCM call.
    ///
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` naming the first argument of the wrong size.
    package static func validateAESGCM(key: Data, nonce: Data, tag: Data? = nil) throws {
        guard key.count == aesGCMKeyByteCount else {
            throw CryptoFailure.invalidInput("AES-256-GCM key must be \(aesGCMKeyByteCount) bytes, got \(key.count)")
        }
        guard nonce.count == aesGCMNonceByteCount else {
            throw CryptoFailure.invalidInput(
                "AES-GCM nonce must be \(aesGCMNonceByteCount) bytes, got \(nonce.count)")
        }
        if let tag, tag.count != aesGCMTagByteCount {
            throw CryptoFailure.invalidInput("AES-GCM tag must be \(aesGCMTagByteCount) bytes, got \(tag.count)")
        }
    }

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

    /// Checks a random-byte count.
    ///
    /// - Throws: ``CryptoFailure/invalidInput(_:)`` for a negative count or one over `Int32.max`.
    package static func validateRandomByteCount(_ count: Int) throws {
        guard count >= 0, count <= Int(Int32.max) else {
            throw CryptoFailure.invalidInput("random byte count must be 0...\(Int32.max), got \(count)")
        }
    }
}

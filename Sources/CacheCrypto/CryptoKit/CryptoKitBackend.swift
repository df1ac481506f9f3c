#if canImport(CryptoKit)
import CryptoKit
import Foundation
import Security

/// The Apple crypto back end: CryptoKit, plus the Security framework for random bytes.
///
/// - AES-256-GCM (NIST SP 800-38D): `AES.GCM` with a 12-byte nonce and a 16-byte tag.
/// - HMAC-SHA-256 (RFC 2104, FIPS 180-4): `HMAC<SHA256>`.
/// - HKDF-SHA-256 (RFC 5869): `HKDF<SHA256>.deriveKey(inputKeyMaterial:salt:info:outputByteCount:)`.
/// - Random bytes: `SecRandomCopyBytes` with the default generator.
///
/// Thread safety: CryptoKit's functions are pure and the types used here are values, so calls may run on any
/// threads at once.
package enum CryptoKitBackend: CryptoProvider {
    // MARK: - AES-256-GCM

    /// Encrypts and authenticates with AES-256-GCM (NIST SP 800-38D); see
    /// ``CryptoProvider/sealAESGCM(key:nonce:plaintext:associatedData:)``.
    package static func sealAESGCM(
        key: Data, nonce: Data, plaintext: Data, associatedData: Data
    ) throws -> (ciphertext: Data, tag: Data) {
        // Sizes are checked here, not left to CryptoKit: `SymmetricKey` accepts any length and would silently
        // pick AES-128 or AES-192 for a short key.
        try validateAESGCM(key: key, nonce: nonce)
        do {
            let sealedBox = try AES.GCM.seal(
                plaintext, using: SymmetricKey(data: key), nonce: AES.GCM.Nonce(data: nonce),
                authenticating: associatedData)
            return (sealedBox.ciphertext, sealedBox.tag)
        } catch {
            throw CryptoFailure.backend("AES.GCM.seal failed: \(error)")
        }
    }

    /// Verifies and decrypts with AES-256-GCM; see
    /// ``CryptoProvider/openAESGCM(key:nonce:ciphertext:tag:associatedData:)``.
    package static func openAESGCM(
        key: Data, nonce: Data, ciphertext: Data, tag: Data, associatedData: Data
    ) throws -> Data {
        try validateAESGCM(key: key, nonce: nonce, tag: tag)
        let sealedBox: AES.GCM.SealedBox
        do {
            sealedBox = try AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag)
        } catch {
            throw CryptoFailure.backend("AES.GCM.SealedBox failed: \(error)")
        }
        do {
            return try AES.GCM.open(sealedBox, using: SymmetricKey(data: key), authenticating: associatedData)
        } catch CryptoKitError.authenticationFailure {
            throw CryptoFailure.authenticationFailed
        } catch {
            throw CryptoFailure.backend("AES.GCM.open failed: \(error)")
        }
    }

    // MARK: - HMAC-SHA-256

    /// Computes HMAC-SHA-256; see ``CryptoProvider/hmacSHA256(key:data:)``.
    package static func hmacSHA256(key: Data, data: Data) throws -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)))
    }

    // MARK: - HKDF-SHA-256

    /// Derives key material with HKDF-SHA-256; see ``CryptoProvider/hkdfSHA256(inputKey:salt:info:outputByteCount:)``.
    package static func hkdfSHA256(inputKey: Data, salt: Data, info: Data, outputByteCount: Int) throws -> Data {
        try validateHKDF(inputKey: inputKey, outputByteCount: outputByteCount)
        let derived = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: inputKey), salt: salt, info: info, outputByteCount: outputByteCount)
        return derived.withUnsafeBytes { Data($0) }
    }

    // MARK: - Random bytes

    /// Returns bytes from `SecRandomCopyBytes`; see ``CryptoProvider/randomBytes(count:)``.
    package static func randomBytes(count: Int) throws -> Data {
        try validateRandomByteCount(count)
        guard count > 0 else { return Data() }
        var bytes = Data(count: count)
        let status = bytes.withUnsafeMutableBytes { buffer -> OSStatus in
            guard let base = buffer.baseAddress else { return errSecAllocate }
            return SecRandomCopyBytes(kSecRandomDefault, count, base)
        }
        guard status == errSecSuccess else {
            throw CryptoFailure.backend("SecRandomCopyBytes failed with OSStatus \(status)")
        }
        return bytes
    }
}
#endif  // canImport(CryptoKit): Linux uses Crypto/OpenSSL/OpenSSLBackend.swift

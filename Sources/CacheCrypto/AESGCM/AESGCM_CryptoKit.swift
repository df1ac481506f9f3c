#if canImport(CryptoKit)
import CryptoKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// AES-256-GCM on Apple platforms: CryptoKit's `AES.GCM` (a 12-byte nonce, a 16-byte tag). Prepared subkeys use
// the one-shot fallback of AESGCM.swift. The interface is AESGCM.swift.

extension CryptoKitBackend {
    /// Encrypts and authenticates with AES-256-GCM (NIST SP 800-38D); see
    /// ``AESGCMPrimitive/sealAESGCM(key:nonce:plaintext:associatedData:)``.
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
    /// ``AESGCMPrimitive/openAESGCM(key:nonce:ciphertext:tag:associatedData:)``.
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
}
#endif  // canImport(CryptoKit): Linux uses AESGCM_OpenSSL.swift

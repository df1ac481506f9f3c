#if canImport(CryptoKit)
import CryptoKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// HKDF-SHA-256 on Apple platforms: CryptoKit's `HKDF<SHA256>`. The interface is HKDF.swift.

extension CryptoKitBackend {
    /// Derives key material with HKDF-SHA-256; see ``HKDFPrimitive/hkdfSHA256(inputKey:salt:info:outputByteCount:)``.
    package static func hkdfSHA256(inputKey: Data, salt: Data, info: Data, outputByteCount: Int) throws -> Data {
        try validateHKDF(inputKey: inputKey, outputByteCount: outputByteCount)
        let derived = HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: inputKey), salt: salt, info: info, outputByteCount: outputByteCount)
        return derived.withUnsafeBytes { Data($0) }
    }
}
#endif  // canImport(CryptoKit): Linux uses HKDF_OpenSSL.swift

#if canImport(CryptoKit)
import CryptoKit
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// HMAC-SHA-256 on Apple platforms: CryptoKit's `HMAC<SHA256>`. Prepared subkeys use the one-shot fallback of
// HMAC.swift. The interface is HMAC.swift.

extension CryptoKitBackend {
    /// Computes HMAC-SHA-256; see ``HMACPrimitive/hmacSHA256(key:data:)``.
    package static func hmacSHA256(key: Data, data: Data) throws -> Data {
        Data(HMAC<SHA256>.authenticationCode(for: data, using: SymmetricKey(data: key)))
    }
}
#endif  // canImport(CryptoKit): Linux uses HMAC_OpenSSL.swift

#if canImport(CryptoKit)
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The Apple crypto back end: CryptoKit, plus the Security framework for random bytes.
///
/// - AES-256-GCM (NIST SP 800-38D): `AES.GCM` with a 12-byte nonce and a 16-byte tag
///   (AESGCM/AESGCM_CryptoKit.swift).
/// - HMAC-SHA-256 (RFC 2104, FIPS 180-4): `HMAC<SHA256>` (HMAC/HMAC_CryptoKit.swift).
/// - HKDF-SHA-256 (RFC 5869): `HKDF<SHA256>` (HKDF/HKDF_CryptoKit.swift).
/// - Random bytes: `SecRandomCopyBytes` with the default generator (SecureRandom/SecureRandom_CryptoKit.swift).
///
/// Thread safety: CryptoKit's functions are pure and the types used here are values, so calls may run on any
/// threads at once.
package enum CryptoKitBackend: CryptoProvider {}
#endif  // canImport(CryptoKit): Linux uses OpenSSL/OpenSSLBackend.swift

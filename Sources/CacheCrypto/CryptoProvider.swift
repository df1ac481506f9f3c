// The crypto interface the tiers' platform-free code calls, in the shape of swift-crypto: one platform-free
// API file per primitive (AESGCM/AESGCM.swift, HMAC/HMAC.swift, HKDF/HKDF.swift, SecureRandom/SecureRandom.swift)
// and one back-end file per platform behind each (`_OpenSSL` on Linux through libcrypto EVP, `_CryptoKit` on
// Apple platforms). `CryptoProvider` is all four; the typealias at the end of this file picks the back end, so
// no other file needs an `#if`.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The cryptographic operations Strata's tiers need, all from a vetted library, none hand-written.
///
/// The one-shot requirements are static, stateless functions: each allocates and frees its own library
/// context, so it is safe to call from any thread at once. The `prepare…` requirements return subkeys set
/// up once for many calls; they too may be used from any thread. Inputs of the wrong size are rejected with
/// ``CryptoFailure/invalidInput(_:)`` before the library is called; nothing here traps on bad input.
///
/// Sizes are fixed by constants in each primitive's extension (``AESGCMPrimitive/aesGCMKeyByteCount`` and
/// the like) so callers and back ends agree on them.
package protocol CryptoProvider: AESGCMPrimitive, HMACPrimitive, HKDFPrimitive, SecureRandomPrimitive {}

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

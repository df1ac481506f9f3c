#if canImport(CryptoKit)
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Security

// Random bytes on Apple platforms: the Security framework's `SecRandomCopyBytes` with the default generator.
// The interface is SecureRandom.swift.

extension CryptoKitBackend {
    /// Returns bytes from `SecRandomCopyBytes`; see ``SecureRandomPrimitive/randomBytes(count:)``.
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
#endif  // canImport(CryptoKit): Linux uses SecureRandom_OpenSSL.swift

#if !canImport(CryptoKit)
import COpenSSL
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Secure zeroing and constant-time comparison from libcrypto. The Apple twins of these functions live in
// CryptoKit/SecureMemory_Darwin.swift under the same names, so shared code calls them without `#if`.

/// Overwrites `bytes` with zeros in a way the optimizer may not remove (`OPENSSL_cleanse`).
///
/// - Parameter bytes: The memory to wipe; an empty buffer is left alone.
/// - Complexity: O(n) in `bytes.count`.
package func secureZero(_ bytes: UnsafeMutableRawBufferPointer) {
    // Neither function needs the library initialized, but each is a first use like any other.
    _ = OpenSSLBackend.libraryIsReady
    guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
    OPENSSL_cleanse(base, bytes.count)
}

/// Tells whether two byte strings are equal, in time that depends on their lengths only (`CRYPTO_memcmp`).
///
/// Use it for anything secret or attacker-influenced (MACs, tags, keys): an early-exit `==` leaks how long a
/// matching prefix is through timing. The lengths themselves are not secret and are compared first.
///
/// - Returns: `true` when `lhs` and `rhs` hold the same bytes.
/// - Complexity: O(n) in the common length.
package func constantTimeEquals(_ lhs: Data, _ rhs: Data) -> Bool {
    _ = OpenSSLBackend.libraryIsReady
    guard lhs.count == rhs.count else { return false }
    guard !lhs.isEmpty else { return true }
    return lhs.withUnsafeBytes { left in
        rhs.withUnsafeBytes { right in
            guard let leftBase = left.baseAddress, let rightBase = right.baseAddress else { return false }
            return CRYPTO_memcmp(leftBase, rightBase, left.count) == 0
        }
    }
}
#endif  // !canImport(CryptoKit): Apple platforms use SecureMemory_Darwin.swift

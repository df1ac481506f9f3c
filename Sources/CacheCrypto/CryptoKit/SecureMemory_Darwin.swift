#if canImport(CryptoKit)
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Secure zeroing and constant-time comparison on Apple platforms, under the same names as the libcrypto
// versions in OpenSSL/SecureMemory_OpenSSL.swift, so shared code calls them without `#if`.

/// Overwrites `bytes` with zeros in a way the optimizer may not remove (C11 Annex K `memset_s`).
///
/// - Parameter bytes: The memory to wipe; an empty buffer is left alone.
/// - Complexity: O(n) in `bytes.count`.
package func secureZero(_ bytes: UnsafeMutableRawBufferPointer) {
    guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
    // memset_s is specified never to be elided; it only fails for invalid sizes, which a buffer cannot have.
    _ = memset_s(base, bytes.count, 0, bytes.count)
}

/// Tells whether two byte strings are equal, in time that depends on their lengths only.
///
/// CryptoKit offers constant-time `==` only on its own MAC and digest types, so this folds the XOR of every
/// byte pair into one accumulator and looks at it once at the end: no branch depends on the contents. It is
/// a comparison, not a cipher, and mirrors libcrypto's `CRYPTO_memcmp`.
///
/// - Returns: `true` when `lhs` and `rhs` hold the same bytes.
/// - Complexity: O(n) in the common length.
package func constantTimeEquals(_ lhs: Data, _ rhs: Data) -> Bool {
    guard lhs.count == rhs.count else { return false }
    // The closures' parameter types are spelled out: Apple's Foundation still has the deprecated
    // `withUnsafeBytes` that passes an `UnsafePointer<ContentType>`, and an untyped nested closure is ambiguous
    // between the two overloads there.
    return lhs.withUnsafeBytes { (left: UnsafeRawBufferPointer) -> Bool in
        rhs.withUnsafeBytes { (right: UnsafeRawBufferPointer) -> Bool in
            var difference: UInt8 = 0
            for index in 0..<left.count {
                difference |= left[index] ^ right[index]
            }
            return difference == 0
        }
    }
}
#endif  // canImport(CryptoKit): Linux uses SecureMemory_OpenSSL.swift

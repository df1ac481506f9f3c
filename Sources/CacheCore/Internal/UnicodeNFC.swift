#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The Unicode NFC form of a string (Unicode Standard Annex #15), the one normalizer behind every
/// canonical key and tag byte (`String.canonicalBytes`, Codable keys, `TagBlock`).
///
/// Stored entries are named by the NFC bytes of their keys, so every build must produce the same bytes.
/// On Apple platforms that is Foundation's `precomposedStringWithCanonicalMapping`, as since the first
/// release. Where FoundationEssentials exists (Linux), importing Foundation for it would load libFoundation
/// and ICU into every process that links Strata, `strata get` included; FoundationEssentials has no
/// normalizer, and the standard library's is `String._nfcCodeUnits` — public, part of its stable ABI, and
/// what the standard library's own string comparison normalizes with, though its name is underscored. It is
/// used here, after a check that skips it for most keys (ASCII and Latin-1 are their own NFC form,
/// ``isNFCWithoutNormalizing(_:)``). `UnicodeNFCTests` checks, scalar by scalar and on composing sequences,
/// that it gives Foundation's bytes (those tests import Foundation; the library does not).
package enum UnicodeNFC {
    /// The UTF-8 bytes of the NFC form of `string`.
    ///
    /// - Complexity: O(*n*).
    package static func utf8(of string: String) -> Data {
        var string = string
        if let bytes = string.withUTF8({ isNFCWithoutNormalizing($0) ? Data($0) : nil }) { return bytes }
        return Data(nfcBytes(of: string))
    }

    /// The NFC form of `string`.
    package static func normalized(_ string: String) -> String {
        var copy = string
        if copy.withUTF8({ isNFCWithoutNormalizing($0) }) { return string }
        return String(decoding: nfcBytes(of: string), as: UTF8.self)
    }

    /// Whether UTF-8 `bytes` are certainly NFC without running the normalizer: every scalar is below U+0300.
    ///
    /// No scalar below U+0300 decomposes, none has a nonzero combining class, and none composes with the one
    /// before it (Unicode's `NFC_Quick_Check` is `Yes` for all of them; the first `Maybe` is U+0300, the first
    /// `No` U+0340), so a string made of them is its own NFC form. In valid UTF-8 these are exactly the
    /// strings whose bytes are all below 0xCC (0xCC 0x80 encodes U+0300).
    package static func isNFCWithoutNormalizing(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.allSatisfy { $0 < 0xCC }
    }

    #if canImport(FoundationEssentials)
    private static func nfcBytes(of string: String) -> [UInt8] {
        string._nfcCodeUnits
    }
    #else
    private static func nfcBytes(of string: String) -> [UInt8] {
        Array(string.precomposedStringWithCanonicalMapping.utf8)
    }
    #endif
}

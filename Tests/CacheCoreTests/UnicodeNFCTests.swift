import Foundation
import Testing

@testable import CacheCore

/// The canonical key bytes must stay byte-identical to Foundation's `precomposedStringWithCanonicalMapping`,
/// which named every entry written before the tool stopped linking Foundation (keys written by an older build
/// must still be found). Linux normalizes with the standard library's `_nfcCodeUnits`; these tests compare the
/// two over every scalar, the combining sequences that compose, and the fast path's claim.
@Suite struct UnicodeNFCTests {
    private static func foundationNFC(_ string: String) -> [UInt8] {
        Array(string.precomposedStringWithCanonicalMapping.utf8)
    }

    @Test func everyScalarNormalizesAsFoundationDoes() {
        // Given every Unicode scalar on its own, and after "a" (so that one which composes with a base does)
        var mismatches: [UInt32] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            for string in [String(scalar), "a" + String(scalar)] {
                // When both normalize it / Then the bytes agree
                if Array(UnicodeNFC.utf8(of: string)) != Self.foundationNFC(string) { mismatches.append(value) }
            }
        }
        #expect(mismatches.isEmpty, "first mismatches: \(mismatches.prefix(10).map { String($0, radix: 16) })")
    }

    @Test func composingSequencesNormalizeAsFoundationDoesWhereItIsNFC() {
        // Given bases followed by combining marks in both orders, Hangul jamo, singletons and a NUL inside
        let bases = ["a", "e", "o", "u", "A", "\u{3B1}", "\u{438}", "\u{1100}\u{1161}", "\u{AC00}", "\u{5D0}"]
        let marks = [
            "\u{300}", "\u{301}", "\u{308}", "\u{323}", "\u{327}", "\u{342}", "\u{5B4}", "\u{11A8}", "\u{3099}",
        ]
        var strings: [String] = [
            "\u{212B}", "\u{2126}", "caf\u{E9}\0cafe\u{301}", "\u{1E0A}\u{323}", "\u{1100}\u{1161}\u{11A8}",
        ]
        for base in bases {
            for first in marks {
                for second in marks { strings.append(base + first + second) }
            }
        }
        // When both normalize them / Then the bytes agree, but where Linux Foundation is not NFC
        for string in strings {
            let expected = Self.composingHangulLVT(Self.foundationNFC(string))
            #expect(Array(UnicodeNFC.utf8(of: string)) == expected, "\(Array(string.unicodeScalars))")
            #expect(Array(UnicodeNFC.normalized(string).utf8) == expected)
        }
        // The one place they differ: a precomposed LV syllable before a trailing jamo, which NFC composes
        // (UAX #15, Hangul: LV + T → LVT) and Foundation on Linux leaves apart
        #expect(Array(UnicodeNFC.utf8(of: "\u{AC00}\u{11A8}")) == Array("\u{AC01}".utf8))
    }

    /// `bytes` with every LV syllable directly followed by a trailing jamo composed into its LVT syllable,
    /// the one NFC step Foundation's normalizer on Linux misses (it composes L V T, not LV T).
    private static func composingHangulLVT(_ bytes: [UInt8]) -> [UInt8] {
        var scalars: [Unicode.Scalar] = []
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            let isLV = scalars.last.map { (0xAC00...0xD7A3).contains($0.value) && ($0.value - 0xAC00) % 28 == 0 }
            if isLV == true, let last = scalars.last, (0x11A8...0x11C2).contains(scalar.value),
                let composed = Unicode.Scalar(last.value + scalar.value - 0x11A7)
            {
                scalars[scalars.count - 1] = composed
            } else {
                scalars.append(scalar)
            }
        }
        var result = ""
        result.unicodeScalars.append(contentsOf: scalars)
        return Array(result.utf8)
    }

    @Test func scalarsBelowU0300AreTheirOwnNFCFormInAnyOrder() {
        // Given every pair of scalars below U+0300 (the fast path's claim: no decomposition, no composition)
        var mismatches: [String] = []
        for first in UInt32(0x20)..<0x300 {
            for second in UInt32(0x20)..<0x300 {
                let string = String(Unicode.Scalar(first)!) + String(Unicode.Scalar(second)!)
                // When Foundation normalizes the pair / Then it is unchanged
                if Self.foundationNFC(string) != Array(string.utf8) { mismatches.append(string) }
            }
        }
        #expect(mismatches.isEmpty, "first mismatches: \(mismatches.prefix(10))")
        // And the fast path takes exactly those strings: 0xCC 0x80 (U+0300) is the first byte it refuses
        #expect("\u{2FF}".utf8.allSatisfy { $0 < 0xCC })
        #expect(!"\u{300}".utf8.allSatisfy { $0 < 0xCC })
    }
}

import Foundation
import Testing

@testable import CacheCore

/// The canonical key bytes must stay byte-identical to Foundation's `precomposedStringWithCanonicalMapping`,
/// which named every entry written before the tool stopped linking Foundation (keys written by an older build
/// must still be found). Linux loads the normalizer from libFoundation on first use; these tests compare the
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

    @Test func composingSequencesNormalizeAsFoundationDoes() {
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
        // When both normalize them / Then the bytes agree
        for string in strings {
            #expect(Array(UnicodeNFC.utf8(of: string)) == Self.foundationNFC(string), "\(Array(string.unicodeScalars))")
            #expect(UnicodeNFC.normalized(string) == string.precomposedStringWithCanonicalMapping)
        }
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

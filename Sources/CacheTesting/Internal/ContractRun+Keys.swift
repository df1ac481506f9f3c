import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The rules about keys: Swift's `String` equality decides which keys name one entry, in every tier,
// whatever the key looks like on its way to a file name.
extension ContractRun {
    func canonicallyEquivalentKeysNameOneEntry() async throws {
        let pairs = [
            ("caf\u{E9}", "cafe\u{301}"),  // é composed (NFC) and as e + combining acute (NFD)
            ("\u{D55C}", "\u{1112}\u{1161}\u{11AB}"),  // Hangul syllable and its conjoining jamo
        ]
        for (composed, decomposed) in pairs {
            // Guards the check itself: the two spellings must differ in scalars and be equal as Strings.
            try expect(
                Array(composed.unicodeScalars) != Array(decomposed.unicodeScalars) && composed == decomposed,
                "internal: \(composed.debugDescription) test keys are not canonically equivalent")
            try await set(Self.data("first"), composed)
            try await expectHit(decomposed, Self.data("first"), "reading the decomposed spelling")
            try await set(Self.data("second"), decomposed)
            try await expectHit(composed, Self.data("second"), "reading the composed spelling after a write")
            try await remove(decomposed)
            try await expectMiss(composed, "after removing the decomposed spelling")
        }
    }

    func distinctKeysStaySeparate() async throws {
        let keys = ["a", "A", "cafe", "caf\u{E9}", "key", "key ", " key", "1", "01", "ab", "a b", "\u{FB01}", "fi"]
        for (index, key) in keys.enumerated() { try await set(Self.data("value-\(index)"), key) }
        for (index, key) in keys.enumerated() {
            try await expectHit(key, Self.data("value-\(index)"), "keys that differ must stay separate")
        }
    }

    func longKeysRoundTrip() async throws {
        let keys = [
            String(repeating: "k", count: 10_000),
            String(repeating: "k", count: 9_999) + "x",
            "x" + String(repeating: "k", count: 9_999),
            String(repeating: "\u{E9}\u{1F9CA}", count: 5_000),  // multi-byte characters, 10,000 of them
        ]
        for (index, key) in keys.enumerated() { try await set(Self.data("long-\(index)"), key) }
        for (index, key) in keys.enumerated() {
            try await expectHit(key, Self.data("long-\(index)"), "a 10,000-character key")
        }
        try await remove(keys[0])
        try await expectMiss(keys[0], "after removing a long key")
        try await expectHit(keys[1], Self.data("long-1"), "a long key sharing a 9,999-character prefix")
    }

    func pathLikeKeysRoundTrip() async throws {
        let keys = [
            "../../etc/passwd", "a/b", "a\\b", "/", ".", "..", "", " ", "\u{0}", "a\u{0}b", "\n", "\t",
            "\u{1F9CA}\u{1F525}", "\u{1F469}\u{200D}\u{1F469}\u{200D}\u{1F467}", "CON", "?*<>|:\"",
            "%2e%2e%2f", "~",
        ]
        for (index, key) in keys.enumerated() { try await set(Self.data("path-\(index)"), key) }
        for (index, key) in keys.enumerated() {
            try await expectHit(key, Self.data("path-\(index)"), "a path-like key")
        }
        try await remove("a/b")
        try await expectMiss("a/b", "after removing a path-like key")
        try await expectHit("a\\b", Self.data("path-2"), "a neighbouring path-like key")
    }
}

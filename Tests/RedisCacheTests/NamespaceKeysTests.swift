import Foundation
import Testing

@testable import RedisCache

@Suite struct NamespaceKeysTests {
    /// RFC 4648 section 10's test vectors, in base64url without the padding the key names leave out.
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy"),
    ])
    func base64URLMatchesTheRFCVectors(input: String, expected: String) {
        #expect(NamespaceKeys.base64URL(Array(input.utf8)) == Array(expected.utf8))
    }

    @Test func base64URLUsesTheURLSafeAlphabetAndAgreesWithFoundation() {
        // Given bytes whose standard base64 holds `+` and `/`, and every length of a 128-bit name's MAC.
        #expect(NamespaceKeys.base64URL([0xFB, 0xFF, 0xBF]) == Array("-_-_".utf8))
        var generator = SystemRandomNumberGenerator()
        for count in 0...48 {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Then the hand-written encoder equals Foundation's base64 mapped to the URL alphabet, unpadded.
            let foundation = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            #expect(NamespaceKeys.base64URL(bytes) == Array(foundation.utf8), "\(bytes)")
        }
    }
}

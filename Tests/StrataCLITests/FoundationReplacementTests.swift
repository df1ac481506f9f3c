import Foundation
import Testing

@testable import strata

/// The tool's own spellings of what it took from Foundation proper before it stopped linking it
/// (Docs/Overview.md, "Foundation on Linux") must print what Foundation printed: these compare them with
/// Foundation itself, which the test process links.
@Suite struct FoundationReplacementTests {
    private static func serialized(_ object: Any) throws -> String {
        let data = try JSONSerialization.data(
            withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        let text = String(decoding: data, as: UTF8.self)
        // What JSONText.render's predecessor did after serializing: empty containers on one line.
        return text.replacingOccurrences(
            of: "([\\[{])\\n\\s*\\n\\s*([\\]}])", with: "$1$2", options: .regularExpression) + "\n"
    }

    @Test func jsonMatchesJSONSerializationsLayout() throws {
        // Given values of every kind, nested, with keys that sort by case, digits and punctuation
        let names = ["_x", "1", "a", "a_b", "A_B", "a1", "ab", "aB", "Ab", "VAR2", "VAR10", "Z", "LC_ALL", "LANG"]
        let text = "a/b\"c\\d\n\t\r\u{8}\u{C}\u{1}\u{1F}\u{7F}\u{2028}é€😀"
        let numbers = [0, 1, 0.5, 1.0 / 3, 2.0 / 3, 1e-7, 123_456_789.125, 0.999]
        let foundation: [String: Any] = [
            "names": Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, $0) }),
            "text": text,
            "numbers": numbers,
            "flags": [true, false],
            "nothing": NSNull(),
            "emptyArray": [Any](),
            "emptyObject": [String: Any](),
            "nested": [["argv": ["echo", "hi"], "cwd": NSNull(), "env": [String: Any]()]],
        ]
        let own: JSONValue = .object([
            "names": .object(Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, .integer($0)) })),
            "text": .string(text),
            "numbers": .array(numbers.map(JSONValue.number)),
            "flags": .array([.bool(true), .bool(false)]),
            "nothing": .null,
            "emptyArray": .array([]),
            "emptyObject": .object([:]),
            "nested": .array([
                .object(["argv": .array([.string("echo"), .string("hi")]), "cwd": .null, "env": .object([:])])
            ]),
        ])
        // When both render them / Then the text is the same, byte for byte
        #expect(JSONText.render(own) == (try Self.serialized(foundation)))
    }

    @Test(arguments: [0, 1, 0.5, 1.0 / 3, 2.0 / 3, 0.9995, 0.0005, 0.00049, 0.1235, 0.1245, 0.9999, 1e-9])
    func hitRatioRoundsAsStringFormatDid(value: Double) {
        #expect(StatsReport.threeDecimals(value) == String(format: "%.3f", value))
    }

    @Test(arguments: ["", " ", "\t 5 \t", "\u{A0}7d\u{2003}", " none\n", "\n12\r\n", "\u{2028}x\u{85}", "a b"])
    func trimmingMatchesCharacterSets(text: String) {
        #expect(String(text.trimmingWhitespace()) == text.trimmingCharacters(in: .whitespaces))
        #expect(
            String(text.trimmingWhitespace(newlines: true)) == text.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test(arguments: ["~", "~/x/y", "~root", "~root/z", "~no-such-user-strata/a", "/abs/~", "rel", ""])
    func tildeExpandsAsNSStringDid(path: String) {
        #expect(StoreLocation.expandingTilde(in: path) == NSString(string: path).expandingTildeInPath)
    }
}

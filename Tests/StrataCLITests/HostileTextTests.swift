import Foundation
import Testing

/// Text that could drive the terminal or reorder a line: C1 controls, line separators and bidirectional
/// overrides in keys, and a server's own error text.
@Suite(.serialized)
struct HostileTextTests {
    @Test func lsEscapesC1ControlsSeparatorsAndBidiOverrides() throws {
        // Given keys holding a C1 CSI, a line separator, a bidi override and an isolate, and an exec
        // argument holding an override
        let harness = try StrataHarness()
        let keys = ["csi\u{9b}31mX", "line\u{2028}break", "rlo\u{202E}txt", "iso\u{2066}late"]
        for key in keys { #expect(try harness.run(["set", key, "1"]).status == 0) }
        #expect(try harness.run(["exec", "--key-cwd", "none", "--", "echo", "a\u{202E}b"]).status == 0)

        // When the store is listed, as text and as JSON
        let list = try harness.run(["ls"])
        let json = try harness.run(["ls", "--json"])

        // Then the text listing shows each as an escape and none of the raw characters
        #expect(list.status == 0)
        for escaped in ["csi\\u{9b}31mX", "line\\u{2028}break", "rlo\\u{202e}txt", "iso\\u{2066}late"] {
            #expect(list.outputText.contains(escaped), "\(list.outputText)")
        }
        #expect(list.outputText.contains("exec: echo $'a\\u202eb'"), "\(list.outputText)")
        let hidden: [Unicode.Scalar] = ["\u{9b}", "\u{2028}", "\u{202E}", "\u{2066}"]
        #expect(!list.outputText.unicodeScalars.contains { hidden.contains($0) })
        // And the JSON listing stays valid JSON holding the exact keys
        let entries = try #require(try JSONSerialization.jsonObject(with: json.standardOutput) as? [[String: Any]])
        let listed = Set(entries.compactMap { $0["key"] as? String })
        #expect(Set(keys).isSubset(of: listed))
    }

    @Test func aServersErrorTextIsEscapedAndCapped() throws {
        // Given a loopback server answering every request with an error holding an OSC title sequence,
        // a BEL, a C1 CSI and 2,000 more characters
        let hostile = "-ERR \u{1b}]0;pwned\u{07}\u{9b}31m" + String(repeating: "x", count: 2000) + "\r\n"
        let listener = try NotRedisListener(reply: Data(hostile.utf8))
        let harness = try StrataHarness()
        let url = "redis://127.0.0.1:\(listener.port)/cli-hostile-text"

        // When a command and stats are pointed at it
        let set = try harness.runAnswered(["--redis", url, "set", "k", "v"])
        let stats = try harness.runAnswered(["--redis", url, "stats"])

        // Then the warning and the state row carry no raw control character, and are cut short
        #expect(set.status == 0)
        #expect(set.errorLines.count == 1)
        let stateRow = stats.outputText.split(separator: "\n").first { $0.hasPrefix("redis state") }
        let lines = [set.errorLines.first ?? "", String(try #require(stateRow))]
        for line in lines {
            #expect(!line.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "\(line)")
            #expect(line.contains("\\u{1b}]0;pwned\\u{7}\\u{9b}31m"), "\(line)")
            #expect(line.count < 400, "\(line.count) characters")
            #expect(line.contains("x…"), "\(line)")
        }
    }
}

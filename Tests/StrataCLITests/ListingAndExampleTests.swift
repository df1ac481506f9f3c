import Foundation
import Testing

/// `ls` shows tags, and the store examples of Docs/CLI.md work when pasted into one fresh shell after
/// another (issue 28).
@Suite(.serialized)
struct ListingAndExampleTests {
    @Test func lsShowsEachEntrysTags() throws {
        // Given a tagged value, a tagged exec result and an untagged value
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "tagged", "v", "--tag", "zeta", "--tag", "alpha beta"]).status == 0)
        #expect(try harness.run(["exec", "--tag", "build", "--", "echo", "hi"]).status == 0)
        #expect(try harness.run(["set", "plain", "v"]).status == 0)

        // When the store is listed
        let lines = try harness.run(["ls"]).outputText.split(separator: "\n").map(String.init)
        let json = try harness.run(["ls", "--json"]).standardOutput

        // Then the tagged entries end with their sorted, shell-quoted tags and the untagged one with its key
        #expect(lines.count == 3)
        #expect(lines.contains { $0.hasSuffix("  tagged  [tags: 'alpha beta' zeta]") }, "\(lines)")
        #expect(lines.contains { $0.hasSuffix("(in \(harness.root.resolvingSymlinksInPath().path))  [tags: build]") })
        #expect(lines.contains { $0.hasSuffix("  plain") }, "\(lines)")
        let objects = try #require(try JSONSerialization.jsonObject(with: json) as? [[String: Any]])
        let tags = Dictionary(
            uniqueKeysWithValues: objects.map { ($0["key"] as? String ?? "", $0["tags"] as? [String]) })
        #expect(tags["tagged"] == ["alpha beta", "zeta"])
        #expect(tags["plain"] == [])
        #expect(tags.first { $0.key.hasPrefix("exec:") }?.value == ["build"])
        // And once a tag is removed, its entries are gone from the listing
        #expect(try harness.run(["rm", "--tag", "zeta"]).status == 0)
        #expect(try harness.run(["ls"]).outputText.split(separator: "\n").count == 2)
    }

    /// The paragraphs of the Examples section of Docs/CLI.md that make and use a dedicated store.
    static let storeExamples = ["# A dedicated store", "# A store shared"]

    @Test(arguments: storeExamples)
    func aStoreExampleWorksInEveryFreshShell(heading: String) throws {
        // Given the example exactly as Docs/CLI.md shows it
        let example = try Self.example(startingWith: heading)
        let harness = try StrataHarness()
        let prelude = """
            set -e
            mkdir -p "$ROOT/bin" "$ROOT/work" && ln -sf "$STRATA" "$ROOT/bin/strata"
            export PATH="$ROOT/bin:$PATH"
            cd "$ROOT/work"

            """

        // When it is pasted into a fresh shell (no STRATA_MASTER_KEY, its own HOME), and then into another
        let first = try harness.runShell(prelude + example, key: .some(nil))
        let second = try harness.runShell(prelude + example, key: .some(nil))

        // Then both shells succeed: every key the example relies on is found again
        #expect(first.status == 0, "\(first.errorText)")
        #expect(second.status == 0, "\(second.errorText)")
        #expect(second.errorText == "")
    }

    /// The paragraph of the Examples section that starts with `heading`, up to the next blank line.
    static func example(startingWith heading: String) throws -> String {
        let guide = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Docs/CLI.md")
        let text = try String(contentsOf: guide, encoding: .utf8)
        let section = try #require(text.components(separatedBy: "\n## Examples\n").last)
        let paragraphs = section.components(separatedBy: "\n\n")
        return try #require(paragraphs.first { $0.hasPrefix(heading) }, "no example starting \(heading)") + "\n"
    }
}

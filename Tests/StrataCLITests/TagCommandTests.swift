import Foundation
import Testing

/// `set --tag`, `exec --tag` and `rm --tag`, driven through the built binary.
@Suite(.serialized)
struct TagCommandTests {
    @Test func removingATagMissesEveryEntryCarryingItAndNoOther() throws {
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "k1", "one", "--tag", "a"]).status == 0)
        #expect(try harness.run(["set", "k2", "two", "--tag", "a", "--tag", "b"]).status == 0)
        #expect(try harness.run(["set", "--tag=b", "k3", "three"]).status == 0)
        #expect(try harness.run(["set", "k4", "four"]).status == 0)
        #expect(try harness.run(["get", "k1"]).outputText == "one")

        let removal = try harness.run(["rm", "--tag", "a"])
        #expect(removal.status == 0)
        #expect(removal.standardOutput.isEmpty)
        #expect(removal.standardError.isEmpty)

        #expect(try harness.run(["get", "k1"]).status == 1)
        #expect(try harness.run(["get", "k2"]).status == 1)
        #expect(try harness.run(["get", "k3"]).outputText == "three")
        #expect(try harness.run(["get", "k4"]).outputText == "four")
        // A tag used again after its removal starts afresh; removing a tag nothing carries succeeds.
        #expect(try harness.run(["set", "k1", "again", "--tag", "a"]).status == 0)
        #expect(try harness.run(["get", "k1"]).outputText == "again")
        #expect(try harness.run(["rm", "--tag", "never-used"]).status == 0)
        // Several tags: every entry carrying any of them.
        #expect(try harness.run(["rm", "--tag", "a", "--tag", "b"]).status == 0)
        #expect(try harness.run(["get", "k1"]).status == 1)
        #expect(try harness.run(["get", "k3"]).status == 1)
        #expect(try harness.run(["get", "k4"]).outputText == "four")
    }

    @Test func verifyCountsEntriesATagRemovalEndedAsExpiredNotBad() throws {
        // Given two tagged entries ended by a tag removal and one untagged entry
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "k1", "one", "--tag", "a"]).status == 0)
        #expect(try harness.run(["set", "k2", "two", "--tag", "a"]).status == 0)
        #expect(try harness.run(["set", "k3", "three"]).status == 0)
        #expect(try harness.run(["rm", "--tag", "a"]).status == 0)

        // When the store is verified
        let result = try harness.run(["verify"])

        // Then they are removed and counted as expired, not listed as bad, and the status is 0
        #expect(result.status == 0, "\(result.errorText)")
        #expect(result.outputText == "checked 3 entries: removed 0 bad, 2 expired\n")
        #expect(result.errorText.isEmpty)
    }

    @Test func aTaggedExecResultIsReplayedUntilItsTagIsRemoved() throws {
        let harness = try StrataHarness()
        let command = ["sh", "-c", "echo run >> \"$0\"; echo out", harness.path("marker")]
        let first = try harness.run(["exec", "--tag", "build"] + ["--"] + command)
        #expect(first.status == 0)
        #expect(first.outputText == "out\n")
        #expect(try harness.run(["exec", "--tag", "build", "--"] + command).outputText == "out\n")
        #expect(harness.lineCount("marker") == 1)

        #expect(try harness.run(["rm", "--tag", "build"]).status == 0)
        #expect(try harness.run(["exec", "--tag", "build", "--"] + command).outputText == "out\n")
        #expect(harness.lineCount("marker") == 2)
        // An untagged run of another command is not touched by the removal of a tag.
        let other = ["sh", "-c", "echo run >> \"$0\"", harness.path("other")]
        #expect(try harness.run(["exec", "--"] + other).status == 0)
        #expect(try harness.run(["rm", "--tag", "build"]).status == 0)
        #expect(try harness.run(["exec", "--"] + other).status == 0)
        #expect(harness.lineCount("other") == 1)
    }

    @Test(arguments: [
        ["rm", "--tag"],
        ["set", "k", "v", "--tag"],
        ["set", "k", "v", "--tag", ""],
        ["set", "k", "v", "--tag="],
        ["rm", "k", "--tag", "t"],
        ["get", "k", "--tag", "t"],
        ["ls", "--tag", "t"],
        ["exec", "--tag", "", "--", "true"],
    ])
    func aBadTagOptionIsAUsageError(arguments: [String]) throws {
        let harness = try StrataHarness()
        let result = try harness.run(arguments)
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines.first?.hasPrefix("strata: ") == true)
        #expect(result.errorLines.dropFirst().first?.hasPrefix("usage: ") == true)
        #expect(!FileManager.default.fileExists(atPath: harness.store.path))
    }

    @Test func rmWithAKeyAndATagSaysItTakesOneOrTheOther() throws {
        let harness = try StrataHarness()
        let result = try harness.run(["rm", "k", "--tag", "t"])
        #expect(result.status == 2)
        #expect(result.errorLines.first == "strata: rm takes a KEY or --tag, not both")
    }

    @Test func helpForSetRmAndExecMentionsTag() throws {
        let harness = try StrataHarness()
        for command in ["set", "rm", "exec"] {
            #expect(try harness.run(["help", command]).outputText.contains("--tag TAG"))
        }
    }
}

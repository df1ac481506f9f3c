import Foundation
import Testing

/// Usage errors, help and version: bad command lines never crash and never touch stdout.
@Suite(.serialized)
struct UsageTests {
    @Test(arguments: [
        [String](),
        ["frobnicate"],
        ["set"],
        ["get"],
        ["rm"],
        ["get", "a", "b"],
        ["set", "k", "v", "--ttl", "-5s"],
        ["set", "k", "v", "--ttl", "soon"],
        ["set", "k", "v", "--ttl"],
        ["--max-size", "12XB", "ls"],
        ["--max-size", "-1", "ls"],
        ["ls", "--max-entries", "-1"],
        ["ls", "--bogus"],
        ["ls", "--ttl", "1m"],
        ["get", "--json", "k"],
        ["exec"],
        ["exec", "--ttl", "1m"],
        ["exec", "--ttl", "1m", "--stale", "forever", "--", "true"],
        ["exec", "--stale", "1h", "--", "true"],
        ["exec", "--key-env", "A=B", "--", "true"],
        ["help", "frobnicate"],
    ])
    func usageErrorExitsTwoWithOneLineAndUsage(arguments: [String]) throws {
        let harness = try StrataHarness()
        let result = try harness.run(arguments)
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines.first?.hasPrefix("strata: ") == true)
        #expect(result.errorLines.dropFirst().first?.hasPrefix("usage: ") == true)
        // Nothing was created for a rejected command line.
        #expect(!FileManager.default.fileExists(atPath: harness.store.path))
    }

    @Test func versionAndHelpGoToStdout() throws {
        let harness = try StrataHarness()
        let version = try harness.run(["--version"], usesStore: false)
        #expect(version.status == 0)
        #expect(version.outputText == "strata 0.1.0\n")

        let help = try harness.run(["--help"], usesStore: false)
        #expect(help.status == 0)
        #expect(help.outputText.contains("exit status"))
        #expect(help.standardError.isEmpty)

        let execHelp = try harness.run(["help", "exec"], usesStore: false)
        #expect(execHelp.status == 0)
        #expect(execHelp.outputText.contains("--cache-failures"))
    }

    @Test(arguments: [
        (["exec", "--ttl", "10", "minutes", "--", "true"], "did you mean --ttl 10m?"),
        (["exec", "--ttl", "1.5", "Hours", "--", "true"], "did you mean --ttl 1.5h?"),
        (["exec", "--ttl", "1m", "--stale", "2", "days", "--", "true"], "did you mean --stale 2d?"),
    ])
    func aDurationSplitFromItsUnitIsNotRunAsTheCommand(arguments: [String], hint: String) throws {
        // Given `--ttl 10 minutes -- CMD`, where the shell made "minutes" look like the command
        let harness = try StrataHarness()

        let result = try harness.run(arguments)

        // Then nothing runs, and the message shows the spelling that works
        #expect(result.status == 2)
        #expect(result.errorLines.first?.hasSuffix(hint) == true)
        #expect(result.errorLines.dropFirst().first?.hasPrefix("usage: strata exec") == true)
        #expect(!FileManager.default.fileExists(atPath: harness.store.path))
    }

    @Test func aUnitWordWithoutALaterDoubleDashIsTheCommand() throws {
        // `--ttl 10 s` with no `--` after: "s" really is the command (here one that does not exist).
        let harness = try StrataHarness()
        let result = try harness.run(["exec", "--ttl", "10", "s", "x"])
        #expect(result.status == 127)
    }

    @Test func helpShowsTheDurationSyntaxAndPointsAtCommandHelp() throws {
        let harness = try StrataHarness()
        let help = try harness.run(["--help"], usesStore: false)
        #expect(help.outputText.contains("durations (--ttl, --stale): a number and a unit, no space: 90s, 10m"))
        #expect(help.outputText.contains("strata help COMMAND shows one command's usage and options"))
        #expect(!help.outputText.contains("Docs/"))
    }

    @Test func malformedClockOffsetIsAUsageError() throws {
        let harness = try StrataHarness()
        let result = try harness.run(["get", "k"], extraEnvironment: ["STRATA_CLOCK_OFFSET": "tomorrow"])
        #expect(result.status == 2)
    }

    @Test(arguments: [
        ("90s", 90.0), ("10m", 600), ("2h", 7200), ("7d", 604_800), ("1h30m", 5400), ("1.5h", 5400), ("90", 90),
    ])
    func durationsAreParsedWithTheirUnits(duration: String, seconds: Double) throws {
        // Given an entry stored with --ttl TEXT
        let harness = try StrataHarness()
        let before = Date()
        #expect(try harness.run(["set", "k", "v", "--ttl", duration]).status == 0)

        // Then its expiry, as listed, is that many seconds after the write (listing rounds to seconds)
        let list = try harness.run(["ls", "--json"])
        let objects = try #require(try JSONSerialization.jsonObject(with: list.standardOutput) as? [[String: Any]])
        let text = try #require(objects.first?["expiresAt"] as? String)
        let expiry = try #require(ISO8601DateFormatter().date(from: text))
        #expect(abs(expiry.timeIntervalSince(before) - seconds) < 5)
    }

    @Test(arguments: [
        ("500MB", 500_000_000), ("2GiB", 2_147_483_648), ("1.5K", 1500), ("4096", 4096), ("0", 0), ("10kib", 10_240),
    ])
    func sizesUseDecimalAndBinaryUnits(text: String, bytes: Int) throws {
        let harness = try StrataHarness()
        let stats = try harness.run(["--max-size", text, "stats", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: stats.standardOutput) as? [String: Any])
        #expect(object["byteLimit"] as? Int == bytes)
    }

    @Test func noneMeansUnlimited() throws {
        let harness = try StrataHarness()
        let stats = try harness.run(["stats", "--json", "--max-size", "none", "--max-entries", "none"])
        let object = try #require(try JSONSerialization.jsonObject(with: stats.standardOutput) as? [String: Any])
        #expect(object["byteLimit"] is NSNull)
        #expect(object["countLimit"] is NSNull)
    }
}

/// Messages and output details found by a fresh user.
@Suite(.serialized)
struct UsageDetailTests {
    @Test func aValueBelowTheLimitWhoseEntryIsNotIsSaidToBeTheEntry() throws {
        let harness = try StrataHarness()
        let result = try harness.run(["--max-size", "50", "set", "c", "x"])
        #expect(result.status == 3)
        #expect(
            result.errorLines == [
                "strata: store \(harness.store.path): the entry (a value of 1 byte, with its key and record) "
                    + "does not fit the size limit of 50 bytes and was not stored; 'c' now has no value"
            ])
    }

    @Test func tooLargeValueIsOneClearSentence() throws {
        let harness = try StrataHarness()
        let result = try harness.run(["--max-size", "300", "set", "big", String(repeating: "x", count: 1000)])
        #expect(result.status == 3)
        #expect(
            result.errorLines == [
                "strata: store \(harness.store.path): the entry (a value of 1000 bytes, with its key and record) "
                    + "does not fit the size limit of 300 bytes and was not stored; 'big' now has no value"
            ])
    }

    @Test func globalOptionErrorShowsTheGlobalUsage() throws {
        let harness = try StrataHarness()
        let result = try harness.run(["--max-size", "-1", "ls"])
        #expect(result.status == 2)
        #expect(result.errorLines.first == "strata: option --max-size '-1' must not be negative")
        #expect(result.errorLines.dropFirst().first?.hasPrefix("usage: strata [--store DIR]") == true)
    }

    @Test func aBadDurationIsQuotedInTheMessage() throws {
        let harness = try StrataHarness()
        let result = try harness.run(["exec", "--ttl", "10M", "--", "true"])
        #expect(result.status == 2)
        #expect(result.errorLines.first?.hasPrefix("strata: option --ttl '10M' is not a duration") == true)
    }

    @Test func helpForExecHasABlankLineBeforeItsOptions() throws {
        let harness = try StrataHarness()
        let result = try harness.run(["help", "exec"], usesStore: false)
        #expect(result.status == 0)
        #expect(result.outputText.contains("as a pipeline would.\n\n--ttl D "))
    }

    @Test func emptyEnvironmentIsPrintedAsAnEmptyObject() throws {
        let harness = try StrataHarness()
        #expect(try harness.run(["exec", "--", "true"]).status == 0)
        let result = try harness.run(["ls", "--json"])
        #expect(result.outputText.contains("\"env\" : {},"))
        #expect(!result.outputText.contains("{\n\n"))
    }

    @Test func durationUnitsAreCaseSensitive() throws {
        let harness = try StrataHarness()
        let upper = try harness.run(["set", "k", "v", "--ttl", "10M"])
        #expect(upper.status == 2)
        #expect(upper.errorLines.first?.contains("lower-case unit") == true)
        // 10m is ten minutes: live 9 minutes later, gone at 10 (a minute of margin: the real time between the
        // two processes adds to the offset, and under ThreadSanitizer on a loaded machine it passed a second)
        #expect(try harness.run(["set", "k", "v", "--ttl", "10m"]).status == 0)
        #expect(try harness.run(["get", "k"], clockOffset: 540).status == 0)
        #expect(try harness.run(["get", "k"], clockOffset: 600).status == 1)
    }
}

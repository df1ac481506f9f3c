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
        ["exec", "--stale", "forever", "--", "true"],
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

    @Test func malformedClockOffsetIsAUsageError() throws {
        let harness = try StrataHarness()
        let result = try harness.run(["get", "k"], extraEnvironment: ["STRATA_CLOCK_OFFSET": "tomorrow"])
        #expect(result.status == 2)
    }
}

import Foundation
import Testing

@testable import strata

/// The tool looks its variables up by name (`RawProcess.variableNames`) instead of reading the whole
/// environment, so a variable read anywhere in its sources but missing from that list would silently be unset.
@Suite struct EnvironmentVariableTests {
    /// Every `"STRATA_…"` literal in the tool's sources.
    private static func variablesNamedInSources() throws -> Set<String> {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/strata")
        let pattern = try NSRegularExpression(pattern: "\"(STRATA_[A-Z_]+)\"")
        var names: Set<String> = []
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                names.insert(String(text[Range(match.range(at: 1), in: text)!]))
            }
        }
        return names
    }

    @Test func everyVariableTheToolReadsIsLookedUp() throws {
        let named = try Self.variablesNamedInSources()
        // The scan itself found the variables (a broken pattern would find none and pass)
        #expect(named.isSuperset(of: ["STRATA_MASTER_KEY", "STRATA_REDIS_URL", "STRATA_REDIS_CA_FILE"]))
        #expect(
            named.subtracting(RawProcess.variableNames).isEmpty,
            "not looked up: \(named.subtracting(RawProcess.variableNames))")
    }

    @Test func listedVariablesHaveTheirValuesAndNoOtherIsRead() throws {
        // (Nothing is set here: other tests in this process start the tool with what it inherits.)
        let environment = RawProcess.environment
        let inherited = ProcessInfo.processInfo.environment
        let home = try #require(environment["HOME"])
        #expect(home == inherited["HOME"])
        for name in RawProcess.variableNames { #expect(environment[name] == inherited[name], "\(name)") }
        #expect(environment["PATH"] == nil)
    }
}

import Foundation
import StrataTestSupport

/// What a seeded scenario over one store starts from: its report, its options and key count, a generator
/// seeded from `--seed`, and a work folder of its own that is removed when the scenario ends.
struct Scenario {
    let report: Report
    /// The subcommand's options; `--keys` and `--seed` are read already.
    let options: Options
    /// `--keys`, or the scenario's default.
    let keyCount: Int
    /// A fresh temporary folder, `reliability-<name>-…`.
    let work: URL

    /// The store's folder inside ``work`` (not created: opening the store creates it).
    var store: URL { work.appendingPathComponent("store") }

    /// Runs `body` on a fresh start and a generator seeded with `--seed` (1 unless told: the same seed
    /// repeats a run's random choices), removes the work folder, and returns the report's verdict.
    ///
    /// - Parameters:
    ///   - name: The scenario's name in its `figure` and verdict lines and in its work folder's name.
    ///   - options: The subcommand's options; `--keys` and `--seed` are read here, the rest by `body`.
    ///   - defaultKeys: The key count without `--keys`.
    /// - Returns: 0 when every expectation held, 1 otherwise.
    static func run(
        _ name: String, _ options: Options, defaultKeys: Int, _ body: (Scenario, inout SplitMix64) throws -> Void
    ) throws -> Int32 {
        let keyCount = try options.int("keys", default: defaultKeys)
        var generator = SplitMix64(seed: UInt64(try options.int("seed", default: 1)))
        let scenario = Scenario(
            report: Report(scenario: name), options: options, keyCount: keyCount,
            work: try TemporaryFolder.make(label: "reliability-\(name)"))
        defer { try? FileManager.default.removeItem(at: scenario.work) }
        try body(scenario, &generator)
        return scenario.report.finish()
    }
}

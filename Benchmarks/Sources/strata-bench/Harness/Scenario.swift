import Foundation

/// Settings every scenario reads: how long to run and where to put files.
struct RunContext: Sendable {
    /// `--quick`: smaller data and fewer rounds, for CI (the whole run stays under a minute).
    let quick: Bool
    /// A fresh folder for this run's stores; removed when the run ends.
    let workDirectory: URL
    /// `--hash-seeds N`: how many key-hash seeds the policy-hit-ratio rows replay each W-TinyLFU figure
    /// with (their median is the figure; see ``PolicyHitRatio``).
    var hashSeeds = 1

    /// Timed rounds per scenario (each round times Strata and the baseline once).
    var rounds: Int { quick ? 5 : 15 }
    /// Untimed rounds before the timed ones.
    var warmUpRounds: Int { quick ? 1 : 2 }
    /// The default round plan.
    var alternatingRounds: AlternatingRounds { AlternatingRounds(warmUpRounds: warmUpRounds, rounds: rounds) }

    /// The round plan for scenarios whose every operation creates a file (9 rounds, 3 under `--quick`):
    /// file creation on a shared ext4 volume costs tens of microseconds to milliseconds, so these rounds are
    /// fewer to keep the run short.
    var diskRounds: AlternatingRounds { AlternatingRounds(warmUpRounds: 1, rounds: quick ? 3 : 9) }

    /// `full` in a full run, `quick` under `--quick`.
    func size(full: Int, quick: Int) -> Int { self.quick ? quick : full }

    /// A new, empty folder under the work directory.
    func makeDirectory(_ name: String) throws -> URL {
        let url = workDirectory.appendingPathComponent(name, isDirectory: true)
        try? FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// A named benchmark that yields one or more result rows.
struct Scenario: Sendable {
    /// The names of the rows it produces; `--filter` matches against these.
    let names: [String]
    let run: @Sendable (RunContext) async throws -> [ScenarioResult]

    init(_ names: String..., run: @escaping @Sendable (RunContext) async throws -> [ScenarioResult]) {
        self.init(names: names, run: run)
    }

    init(names: [String], run: @escaping @Sendable (RunContext) async throws -> [ScenarioResult]) {
        self.names = names
        self.run = run
    }
}

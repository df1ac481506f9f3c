import Foundation
import StrataTestSupport
import Testing

/// `strata exec --redis`: the same command started at once on 8 stores sharing one Redis server runs once, and
/// every process exits with its status and prints its output byte for byte (issue 27, part 5). A run that is not
/// kept (a failure without `--cache-failures`) leaves the next process to run the command itself.
@Suite(
    .serialized, .enabled(if: CLIRedisServer.runs, "redis-server not found: CLI Redis tests skipped (CI fails instead)")
)
struct RedisExecFleetTests {
    /// Starts `command` through `strata exec` on each of `stores` at once, all in the first store's folder (the
    /// working directory is part of an exec key) with the first store's master key, and waits for every one.
    static func runAtOnce(_ command: [String], on stores: [StrataHarness], url: String) throws -> [StrataResult] {
        let started = try stores.map { try startExec(on: $0, like: stores[0], url: url, command: command) }
        return try started.map { try $0.wait() }
    }

    /// Starts `strata exec --ttl 10m options… -- command…` on `store` through the Redis at `url`, in `first`'s
    /// folder with `first`'s master key (as every machine of a fleet runs it), with `extra` in its environment.
    static func startExec(
        on store: StrataHarness, like first: StrataHarness, url: String, options: [String] = [], command: [String],
        extra: [String: String] = [:]
    ) throws -> RunningStrata {
        try RunningStrata(
            arguments: ["--store", store.store.path, "--redis", url, "exec", "--ttl", "10m"] + options + ["--"]
                + command,
            stdin: nil, environment: store.environment(key: first.key, extra: extra),
            directory: first.root)
    }

    /// Waits until `store`'s file `marker` has a line (the command began), for at most 60 s (a guard against a
    /// hang, never a measure of speed).
    static func waitForTheFirstRun(in store: StrataHarness) {
        let patience = ContinuousClock.now + .seconds(60)
        while store.lineCount("marker") == 0 && ContinuousClock.now < patience { Thread.sleep(forTimeInterval: 0.01) }
    }

    @Test func eightStoresStartingOneCommandAtOnceRunItOnceAndPrintTheSameBytes() throws {
        // Given 8 stores on one server, and a command of about a second that writes to both streams
        let server = try CLIRedisServer()
        let stores = try (0..<8).map { _ in try StrataHarness() }
        let marker = stores[0].path("marker")
        let command = ["sh", "-c", "echo run >> \"$0\"; sleep 1; printf 'out\\n'; printf 'err\\n' >&2", marker]
        // When all 8 run it at once
        let results = try Self.runAtOnce(command, on: stores, url: "redis://127.0.0.1:\(server.port)/cli-fleet")
        // Then it ran once, and every process printed its output and exited 0: the one that ran it live, the
        // others replaying it (a process that waited past 3 s adds one notice line)
        #expect(stores[0].lineCount("marker") == 1)
        for result in results {
            #expect(result.status == 0)
            #expect(result.standardOutput == Data("out\n".utf8))
            #expect(result.errorLines.filter { !$0.hasPrefix("strata: waiting for another machine") } == ["err"])
        }
    }

    @Test func aWaiterSaysOnceThatItWaitsAndTheRunnerSaysNothing() throws {
        // Given a store running a command that marks its start, then takes 5 seconds, and a notice due after
        // 0.2 s of waiting (the test-only setting; 3 s by default)
        let server = try CLIRedisServer()
        let stores = try (0..<2).map { _ in try StrataHarness() }
        let marker = stores[0].path("marker")
        let url = "redis://127.0.0.1:\(server.port)/cli-fleet"
        let start = { (store: StrataHarness) throws -> RunningStrata in
            try Self.startExec(
                on: store, like: stores[0], url: url,
                command: ["sh", "-c", "echo run >> \"$0\"; sleep 5; echo out", marker],
                extra: ["STRATA_WAIT_NOTICE_DELAY": "0.2"])
        }
        let runner = try start(stores[0])
        // When another store starts the same command once it runs (so the runner's own wait is over)
        Self.waitForTheFirstRun(in: stores[0])
        let waiter = try start(stores[1])
        let ran = try runner.wait()
        let waited = try waiter.wait()
        // Then the waiter said once that it waits, then replayed the result; the runner said nothing extra
        #expect(ran.errorLines == [])
        #expect(
            waited.errorLines == ["strata: waiting for another machine sharing the Redis server to finish this command"]
        )
        #expect(ran.outputText == "out\n")
        #expect(waited.outputText == "out\n")
        #expect(waited.status == 0)
        #expect(stores[0].lineCount("marker") == 1)
    }

    @Test func aResultRedisMissesMidRunIsKeptForReplay() throws {
        // Given a store running a command under the lease, and Redis gone before the run ends
        let server = try CLIRedisServer()
        let store = try StrataHarness()
        let marker = store.path("marker")
        let url = "redis://127.0.0.1:\(server.port)/cli-fleet"
        let running = try RunningStrata(
            arguments: [
                "--store", store.store.path, "--redis", url, "exec", "--ttl", "10m", "--", "sh", "-c",
                "echo run >> \"$0\"; sleep 1; echo out", marker,
            ],
            stdin: nil, environment: store.environment(key: store.key, extra: [:]), directory: store.root)
        Self.waitForTheFirstRun(in: store)
        server.stop()
        let ran = try running.wait()
        // Then the run ends as usual, says once that Redis missed it, and its result waits in the pending
        // journal for the next run that reaches Redis (not lost, as the load's own silent store would lose it)
        #expect(ran.status == 0)
        #expect(ran.outputText == "out\n")
        #expect(ran.errorLines.count == 1)
        #expect(ran.errorLines.first?.hasPrefix("strata: warning: Redis at 127.0.0.1:\(server.port)") == true)
        let stats = try RunningStrata(
            arguments: ["--store", store.store.path, "--redis", url, "stats"], stdin: nil,
            environment: store.environment(key: store.key, extra: [:]), directory: store.root
        ).wait()
        #expect(stats.outputText.contains("redis pending writes       1"))
    }

    @Test func aFailureThatIsNotKeptLeavesEachWaitingStoreToRunTheCommand() throws {
        // Given 3 stores and a command that fails
        let server = try CLIRedisServer()
        let stores = try (0..<3).map { _ in try StrataHarness() }
        let marker = stores[0].path("marker")
        let command = ["sh", "-c", "echo run >> \"$0\"; echo failed >&2; exit 3", marker]
        // When all 3 run it at once
        let results = try Self.runAtOnce(command, on: stores, url: "redis://127.0.0.1:\(server.port)/cli-fleet")
        // Then nothing is kept, so each ran it (one after another, as each found the lease given up), and each
        // exits with the command's own status and error
        #expect(stores[0].lineCount("marker") == 3)
        for result in results {
            #expect(result.status == 3)
            #expect(result.errorLines.filter { !$0.hasPrefix("strata: waiting for another machine") } == ["failed"])
        }
    }

    @Test func aWaiterGivesUpAfterTheLeaseItWasGivenAndRunsTheCommandItself() throws {
        // Given a store running a command under a lease of 3 s (`--lease`), the first run held until the test
        // releases it, later runs quick
        let server = try CLIRedisServer()
        let stores = try (0..<2).map { _ in try StrataHarness() }
        let marker = stores[0].path("marker")
        let release = stores[0].path("release")
        // Whatever happens, the held run ends with the test (a failed expectation must not leave it looping).
        defer { _ = FileManager.default.createFile(atPath: release, contents: nil) }
        let script = """
            echo run >> "$0"; if [ "$(wc -l < "$0")" -eq 1 ]; then while [ ! -e "$1" ] && [ -e "$0" ]; do sleep 0.05; done; fi; \
            echo out
            """
        let url = "redis://127.0.0.1:\(server.port)/cli-fleet"
        let start = { (store: StrataHarness) throws -> RunningStrata in
            try Self.startExec(
                on: store, like: stores[0], url: url, options: ["--lease", "3s"],
                command: ["sh", "-c", script, marker, release])
        }
        let runner = try start(stores[0])
        Self.waitForTheFirstRun(in: stores[0])
        // (the runner's lease in Redis lasts the 3 s it was given, not the default 10 s)
        let leases = try RedisClusterCommandTests.redisCLI(
            port: server.port, ["--scan", "--pattern", "strata:v2:cli-fleet:l:*"])
        let lease = try #require(leases.split(separator: "\n").first.map(String.init))
        let timeToLive = try #require(Int(try RedisClusterCommandTests.redisCLI(port: server.port, ["PTTL", lease])))
        #expect((0...3_000).contains(timeToLive), "the lease has \(timeToLive) ms left")
        // When another store starts the same command while the first run goes on (past 3 s)
        let waited = try start(stores[1]).wait()
        // Then it waited no longer than its lease and ran the command itself (the default lease of 10 s would
        // have kept it waiting for the held run)
        #expect(stores[0].lineCount("marker") == 2)
        #expect(waited.status == 0)
        #expect(waited.outputText == "out\n")
        #expect(FileManager.default.createFile(atPath: release, contents: nil))
        let ran = try runner.wait()
        #expect(ran.status == 0)
        #expect(ran.outputText == "out\n")
    }

    @Test func aTagRemovalWhileTheCommandRunsKeepsItsResultFromTheOtherMachines() throws {
        // Given a store running a tagged command that prints a file, its first run held until the test releases it
        // (the run marks its start after it read the file: marking first let the test change the file before
        // the first run read it)
        let server = try CLIRedisServer()
        let stores = try (0..<3).map { _ in try StrataHarness() }
        let (marker, release, source) = (stores[0].path("marker"), stores[0].path("release"), stores[0].path("source"))
        // Whatever happens, the held run ends with the test (a failed expectation must not leave it looping).
        defer { _ = FileManager.default.createFile(atPath: release, contents: nil) }
        try Data("v1\n".utf8).write(to: URL(fileURLWithPath: source))
        let script = """
            cat "$2"; echo run >> "$0"; if [ "$(wc -l < "$0")" -eq 1 ]; then \
            while [ ! -e "$1" ] && [ -e "$0" ]; do sleep 0.05; done; fi
            """
        let url = "redis://127.0.0.1:\(server.port)/cli-fleet"
        let start = { (store: StrataHarness) throws -> RunningStrata in
            try Self.startExec(
                on: store, like: stores[0], url: url, options: ["--tag", "build"],
                command: ["sh", "-c", script, marker, release, source])
        }
        let runner = try start(stores[0])
        Self.waitForTheFirstRun(in: stores[0])
        // When the file changes and another machine removes the tag's entries while the run goes on, then the
        // run ends (with the old content) and a third machine runs the command
        try Data("v2\n".utf8).write(to: URL(fileURLWithPath: source))
        let removal = try RunningStrata(
            arguments: ["--store", stores[2].store.path, "--redis", url, "rm", "--tag", "build"], stdin: nil,
            environment: stores[2].environment(key: stores[0].key, extra: [:]), directory: stores[0].root
        ).wait()
        #expect(removal.status == 0)
        #expect(FileManager.default.createFile(atPath: release, contents: nil))
        let ran = try runner.wait()
        #expect(ran.outputText == "v1\n")
        let after = try start(stores[1]).wait()
        // Then the removal won: the run that began before it left nothing in Redis, so the third machine ran the
        // command and printed the new content
        #expect(after.outputText == "v2\n")
        #expect(stores[0].lineCount("marker") == 2)
    }

    @Test func aResultKeptLongerForAnotherMachinesStaleWindowIsNotReplayedPastThisRunsOwn() throws {
        // Given a result kept through Redis by a machine with `--ttl 2s --stale 1h` (so Redis holds it an hour)
        let server = try CLIRedisServer()
        let stores = try (0..<2).map { _ in try StrataHarness() }
        let (marker, source) = (stores[0].path("marker"), stores[0].path("source"))
        try Data("v1\n".utf8).write(to: URL(fileURLWithPath: source))
        let url = "redis://127.0.0.1:\(server.port)/cli-fleet"
        let command = ["sh", "-c", "echo run >> \"$0\"; cat \"$1\"", marker, source]
        let exec = { (store: StrataHarness, options: [String], offset: String) throws -> StrataResult in
            try RunningStrata(
                arguments: ["--store", store.store.path, "--redis", url, "exec"] + options + ["--"] + command,
                stdin: nil,
                environment: store.environment(key: stores[0].key, extra: ["STRATA_CLOCK_OFFSET": offset]),
                directory: stores[0].root
            ).wait()
        }
        #expect(try exec(stores[0], ["--ttl", "2s", "--stale", "1h"], "0").outputText == "v1\n")
        try Data("v2\n".utf8).write(to: URL(fileURLWithPath: source))
        // When another machine, 3 s later by its clock, runs it with `--ttl 2s` and no stale window
        let later = try exec(stores[1], ["--ttl", "2s"], "3")
        // Then the record is past its TTL for that run: the command runs and prints the new content
        #expect(later.outputText == "v2\n")
        #expect(stores[0].lineCount("marker") == 2)
    }

    @Test func aRunnerKilledMidRunIsTakenOverByOneWaiterAndTheOthersReplayItsResult() throws {
        // Given a store running a command under a lease of 10 s, its first run held until the test releases it,
        // and three more stores waiting for it: each has said so (after 50 ms of waiting) before the runner is
        // killed. (A lease of 2 s, and a kill as soon as the waiters were started, let a loaded machine start
        // them after the lease had run out; they then waited for the waiter that took it, as with the mutant
        // that waits for no takeover, which survived the gate.)
        let server = try CLIRedisServer()
        let stores = try (0..<4).map { _ in try StrataHarness() }
        let (marker, release) = (stores[0].path("marker"), stores[0].path("release"))
        // Whatever happens, the held run ends with the test (a failed expectation must not leave it looping).
        defer { _ = FileManager.default.createFile(atPath: release, contents: nil) }
        let script = """
            echo run >> "$0"; if [ "$(wc -l < "$0")" -eq 1 ]; then \
            while [ ! -e "$1" ] && [ -e "$0" ]; do sleep 0.05; done; fi; echo out
            """
        let url = "redis://127.0.0.1:\(server.port)/cli-fleet"
        let start = { (store: StrataHarness) throws -> RunningStrata in
            try Self.startExec(
                on: store, like: stores[0], url: url, options: ["--lease", "10s"],
                command: ["sh", "-c", script, marker, release], extra: ["STRATA_WAIT_NOTICE_DELAY": "0.05"])
        }
        let runner = try start(stores[0])
        Self.waitForTheFirstRun(in: stores[0])
        let waiters = try stores.dropFirst().map { try start($0) }
        let patience = ContinuousClock.now + .seconds(60)
        while waiters.contains(where: { !$0.errorSoFar.contains("strata: waiting for another machine") }),
            ContinuousClock.now < patience
        {
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(waiters.allSatisfy { $0.errorSoFar.contains("strata: waiting for another machine") })
        // When the runner is killed (its lease then lasts out its 10 s)
        runner.kill()
        _ = try runner.wait()
        let results = try waiters.map { try $0.wait() }
        #expect(FileManager.default.createFile(atPath: release, contents: nil))
        // Then one waiter took the lease over and ran the command, and the other two replayed its result
        #expect(stores[0].lineCount("marker") == 2, "the waiters' standard error: \(results.map(\.errorLines))")
        for result in results {
            #expect(result.status == 0)
            #expect(result.outputText == "out\n")
        }
    }
}

import Foundation
import Testing

/// `strata exec`: running once, replaying, keying, expiry, concurrency and launch failures.
@Suite(.serialized)
struct ExecCommandTests {
    @Test func replaysARealCommandsOutputAndStatus() throws {
        let harness = try StrataHarness()
        let first = try harness.run(["exec", "--", "ls", "-la", "/usr/bin"])
        let second = try harness.run(["exec", "--", "ls", "-la", "/usr/bin"])
        #expect(first.status == 0)
        #expect(first.standardOutput.count > 1000)
        #expect(second.status == 0)
        #expect(second.standardOutput == first.standardOutput)
        #expect(second.standardError == first.standardError)
        // The store lists it in the exec namespace.
        let list = try harness.run(["ls"])
        #expect(list.outputText.contains("exec: ls -la /usr/bin (in "))
    }

    @Test func cachedFailureReplaysStdoutStderrAndStatusWithoutRunning() throws {
        // Given a failing command that counts its runs
        let harness = try StrataHarness()
        let command = ["sh", "-c", "echo run >> \"$0\"; echo out; echo err >&2; exit 7", harness.path("marker")]

        // When it is run twice with --cache-failures
        let first = try harness.run(["exec", "--cache-failures", "--"] + command)
        let second = try harness.run(["exec", "--cache-failures", "--"] + command)

        // Then it ran once and the replay has the same outputs and status 7
        for result in [first, second] {
            #expect(result.status == 7)
            #expect(result.outputText == "out\n")
            #expect(result.errorText == "err\n")
        }
        #expect(harness.lineCount("marker") == 1)
    }

    @Test func failureIsNotKeptByDefault() throws {
        let harness = try StrataHarness()
        let command = ["sh", "-c", "echo run >> \"$0\"; exit 7", harness.path("marker")]
        #expect(try harness.run(["exec", "--"] + command).status == 7)
        #expect(try harness.run(["exec", "--"] + command).status == 7)
        #expect(harness.lineCount("marker") == 2)
    }

    @Test func binaryFiveMebibyteOutputsReplayByteForByte() throws {
        // Given a command writing 5 MiB of binary to stdout and 5 MiB to stderr
        let harness = try StrataHarness()
        let file = try SystemSample.filePath(atLeast: 5 * 1024 * 1024)
        let expected = try SystemSample.bytes(count: 5 * 1024 * 1024)
        let script = "echo run >> \"$0\"; head -c 5242880 \"$1\"; head -c 5242880 \"$1\" >&2"
        let command = ["sh", "-c", script, harness.path("marker"), file]

        // When it runs, then replays
        let first = try harness.run(["exec", "--"] + command)
        let replay = try harness.run(["exec", "--"] + command)

        // Then both outputs are the bytes of the file, and the command ran once
        for result in [first, replay] {
            #expect(result.status == 0)
            #expect(result.standardOutput == expected)
            #expect(result.standardError == expected)
        }
        #expect(harness.lineCount("marker") == 1)
    }

    @Test func argumentVectorIsKeyedAsAList() throws {
        let harness = try StrataHarness()
        let joined = try harness.run(["exec", "--", "printf", "%s", "a b"])
        let split = try harness.run(["exec", "--", "printf", "%s", "a", "b"])
        #expect(joined.outputText == "a b")
        #expect(split.outputText == "ab")
        #expect(try harness.run(["exec", "--", "printf", "%s", "a b"]).outputText == "a b")
    }

    @Test func keyEnvironmentVariablesArePartOfTheKey() throws {
        let harness = try StrataHarness()
        let command = ["exec", "--key-env", "GREETING", "--", "sh", "-c", "printf %s \"${GREETING-unset}\""]
        #expect(try harness.run(command, extraEnvironment: ["GREETING": "hi"]).outputText == "hi")
        #expect(try harness.run(command, extraEnvironment: ["GREETING": "bye"]).outputText == "bye")
        #expect(try harness.run(command).outputText == "unset")
        #expect(try harness.run(command, extraEnvironment: ["GREETING": "hi"]).outputText == "hi")
    }

    @Test func timeToLiveExpiresAndTheCommandRunsAgain() throws {
        let harness = try StrataHarness()
        let command = ["exec", "--ttl", "1m", "--", "sh", "-c", "echo run >> \"$0\"", harness.path("marker")]
        #expect(try harness.run(command).status == 0)
        #expect(try harness.run(command, clockOffset: 30).status == 0)
        #expect(harness.lineCount("marker") == 1)
        #expect(try harness.run(command, clockOffset: 61).status == 0)
        #expect(harness.lineCount("marker") == 2)
    }

    @Test func concurrentExecOfOneKeyRunsTheCommandOnce() throws {
        // Given a command that takes a moment and counts its runs
        let harness = try StrataHarness()
        let command = ["exec", "--", "sh", "-c", "echo x >> \"$0\"; sleep 0.5; echo done", harness.path("marker")]

        // When 8 processes exec it at once
        let runs = try (0..<8).map { _ in try harness.start(command) }
        let results = try runs.map { try $0.wait() }

        // Then it ran once and every process printed its output
        #expect(harness.lineCount("marker") == 1)
        for result in results {
            #expect(result.status == 0, "\(result.errorText)")
            #expect(result.outputText == "done\n")
        }
    }

    @Test func staleResultIsReplayedAndRefreshedOnce() throws {
        // Given a result that is fresh for a minute and may be served stale for an hour after
        let harness = try StrataHarness()
        let script = "echo run >> \"$0\"; wc -l < \"$0\" | tr -d ' '"
        let command = ["exec", "--ttl", "1m", "--stale", "1h", "--", "sh", "-c", script, harness.path("marker")]
        #expect(try harness.run(command).outputText == "1\n")

        // When it is read after it went stale
        let stale = try harness.run(command, clockOffset: 120)

        // Then the old output is replayed at once
        #expect(stale.status == 0)
        #expect(stale.outputText == "1\n")

        // And a refresh (the one started in the background, or this synchronous one — whichever takes the
        // key's lock first; the other finds the result fresh) stores a new result exactly once
        #expect(try harness.run(["--background-refresh"] + command, clockOffset: 120).standardOutput.isEmpty)
        #expect(try harness.run(command, clockOffset: 120).outputText == "2\n")
        #expect(harness.lineCount("marker") == 2)
    }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/proc/self/fd")))
    func commandDoesNotInheritTheStoresDescriptors() throws {
        // Given a command that lists where its open descriptors point, run while exec holds the key's lock
        let harness = try StrataHarness()
        let result = try harness.run([
            "exec", "--", "sh", "-c", "for f in /proc/$$/fd/*; do readlink \"$f\"; done; true",
        ])

        // Then none of them is a file of the store (a leaked lock could be held by a daemon forever)
        #expect(result.status == 0)
        #expect(!result.outputText.isEmpty)
        #expect(!result.outputText.contains(harness.store.path))
    }

    @Test func missingCommandExits127AndNonExecutableExits126() throws {
        let harness = try StrataHarness()
        let missing = try harness.run(["exec", "--", "strata-no-such-command-here"])
        #expect(missing.status == 127)
        #expect(missing.errorLines.count == 1)
        #expect(missing.errorText.contains("strata-no-such-command-here"))

        try Data("x".utf8).write(to: URL(fileURLWithPath: harness.path("plain.txt")))
        let notExecutable = try harness.run(["exec", "--", harness.path("plain.txt")])
        #expect(notExecutable.status == 126)
        #expect(notExecutable.errorLines.count == 1)
    }
}

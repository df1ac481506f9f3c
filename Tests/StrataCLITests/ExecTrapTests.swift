import Foundation
import Testing

/// The command-line traps of issue 28 around `exec`: an option written after the command without `--`, an
/// option whose value is missing, and the working directory in the key (`--key-cwd`).
@Suite(.serialized)
struct ExecTrapTests {
    // MARK: - An option after the command, without `--`

    @Test(arguments: [
        (["exec", "touch", "MARKER", "--ttl", "1h"], "ttl"),
        (["exec", "touch", "MARKER", "--ttl=1h"], "ttl"),
        (["exec", "--cache-failures", "touch", "MARKER", "--key-env", "LANG"], "key-env"),
        (["exec", "touch", "MARKER", "--cache-failures"], "cache-failures"),
        (["exec", "touch", "MARKER", "--stale=1d"], "stale"),
        (["exec", "touch", "MARKER", "--max-output", "1K"], "max-output"),
        (["exec", "touch", "MARKER", "--tag", "t"], "tag"),
        (["exec", "touch", "MARKER", "--key-cwd=none"], "key-cwd"),
        (["exec", "touch", "MARKER", "--store", "elsewhere"], "store"),
        (["exec", "touch", "MARKER", "--redis=redis://127.0.0.1/x"], "redis"),
        (["exec", "touch", "MARKER", "--max-size", "1G"], "max-size"),
        (["exec", "touch", "MARKER", "--max-entries=5"], "max-entries"),
        (["exec", "touch", "MARKER", "--help"], "help"),
        (["exec", "touch", "MARKER", "--version"], "version"),
        // A `--` after the command does not make an option before it the command's
        (["exec", "touch", "MARKER", "--", "--ttl"], "ttl"),
        // Nor does a `--` before the command name: it is not the `--` before the command
        (["--", "exec", "touch", "MARKER", "--ttl", "1h"], "ttl"),
    ])
    func anOptionAfterTheCommandWithoutDoubleDashIsAUsageError(arguments: [String], option: String) throws {
        // Given a command line where a strata option follows the command and no `--` comes first
        let harness = try StrataHarness()
        let marker = harness.path("marker")

        // When it is run
        let result = try harness.run(arguments.map { $0 == "MARKER" ? marker : $0 })

        // Then it is refused with one line naming the option and asking for `--`, and nothing ran or was made
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        let first = result.errorLines.first ?? ""
        #expect(first.hasPrefix("strata: --\(option) comes after the command 'touch'"), "\(first)")
        #expect(first.contains("put -- before the command"), "\(first)")
        #expect(result.errorLines.dropFirst().first?.hasPrefix("usage: strata exec") == true)
        #expect(!FileManager.default.fileExists(atPath: marker))
        #expect(!FileManager.default.fileExists(atPath: harness.store.path))
    }

    @Test func wordsThatAreNotStrataOptionsAndEverythingAfterDoubleDashReachTheCommand() throws {
        // Given words that only look like options: short forms, another command's option, a longer name
        let harness = try StrataHarness()
        // Then the command gets them all
        let plain = try harness.run(["exec", "echo", "-h", "-V", "--json", "--ttlx"])
        #expect(plain.status == 0)
        #expect(plain.outputText == "-h -V --json --ttlx\n")
        // And after `--`, strata's own option names are the command's arguments
        let separated = try harness.run(["exec", "--", "echo", "hi", "--ttl", "1h", "--store=x"])
        #expect(separated.status == 0)
        #expect(separated.outputText == "hi --ttl 1h --store=x\n")
    }

    @Test func aLoneDashBeforeExecsCommandIsAnUnknownOption() throws {
        // Given `exec - CMD`, where the `-` would otherwise be dropped without a word
        let harness = try StrataHarness()
        let marker = harness.path("marker")

        // When it is run
        let result = try harness.run(["exec", "-", "touch", marker])

        // Then it is a usage error naming the `-`, and nothing ran
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        let first = result.errorLines.first ?? ""
        #expect(first.hasPrefix("strata: unknown option -"), "\(first)")
        #expect(result.errorLines.dropFirst().first?.hasPrefix("usage: strata exec") == true)
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    // MARK: - A missing option value

    @Test(arguments: [
        (["exec", "--ttl", "--", "echo", "hi"], "ttl"),
        (["exec", "--stale", "--", "echo", "hi"], "stale"),
        (["exec", "--key-env", "--cache-failures", "--", "echo", "hi"], "key-env"),
        (["exec", "--max-output", "--", "echo", "hi"], "max-output"),
        (["exec", "--tag", "--", "echo", "hi"], "tag"),
        (["exec", "--key-cwd", "--", "echo", "hi"], "key-cwd"),
        (["set", "k", "v", "--ttl", "--tag", "t"], "ttl"),
        (["set", "k", "v", "--tag", "--ttl=1m"], "tag"),
        (["rm", "--tag", "--"], "tag"),
        (["--max-size", "--", "ls"], "max-size"),
        (["--max-entries", "--max-size=1G", "ls"], "max-entries"),
        (["--redis", "--", "get", "k"], "redis"),
        (["ls", "--store", "--json"], "store"),
        (["set", "k", "v", "--ttl"], "ttl"),
    ])
    func aMissingValueIsReportedAsMissing(arguments: [String], option: String) throws {
        // Given an option that takes a value, followed by `--`, another option, or nothing
        let harness = try StrataHarness()

        // When it is run
        let result = try harness.run(arguments)

        // Then the one line says the value is missing, not that some other word is a bad value
        #expect(result.status == 2)
        #expect(result.errorLines.first == "strata: option --\(option) needs a value", "\(result.errorText)")
        #expect(result.standardOutput.isEmpty)
    }

    @Test func aValueThatStartsWithDoubleDashIsGivenAfterEquals() throws {
        // Given a tag that starts with `--`, which the next-word form reads as a missing value
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "k", "v", "--tag", "--odd"]).status == 2)
        // When it is given after `=`, it is the value
        #expect(try harness.run(["set", "k", "v", "--tag=--odd"]).status == 0)
        #expect(try harness.run(["rm", "--tag=--odd"]).status == 0)
        #expect(try harness.run(["get", "k"]).status == 1)
    }

    // MARK: - The working directory in the key

    @Test func checkoutsAtDifferentPathsShareAResultKeyedRelativeToTheirRoot() throws {
        // Given two checkouts at different paths, each with the same sub-folder
        let harness = try StrataHarness()
        let first = try harness.makeFolder("agent-1/checkout")
        let second = try harness.makeFolder("agent-2/somewhere/else")
        let firstSub = try harness.makeFolder("agent-1/checkout/pkg")
        let secondSub = try harness.makeFolder("agent-2/somewhere/else/pkg")
        let command = ["sh", "-c", "echo run >> \"$0\"; echo built", harness.path("marker")]

        // When each runs the same command in its `pkg`, keyed relative to its own checkout
        let ran = try harness.run(
            ["exec", "--key-cwd", "relative:\(first.path)", "--"] + command, directory: firstSub)
        let replayed = try harness.run(
            ["exec", "--key-cwd=relative:\(second.path)", "--"] + command, directory: secondSub)

        // Then the command ran once and the second checkout replayed its result
        #expect(ran.status == 0)
        #expect(replayed.status == 0)
        #expect(replayed.outputText == "built\n")
        #expect(harness.lineCount("marker") == 1)
        // And the key holds the relative directory, which ls shows
        let list = try harness.run(["ls"]).outputText
        #expect(list.contains("(in ./pkg)"), "\(list)")
        let json = try harness.run(["ls", "--json"]).standardOutput
        let objects = try #require(try JSONSerialization.jsonObject(with: json) as? [[String: Any]])
        #expect(objects.first?["cwd"] as? String == "./pkg")
        // And at the root itself the directory is `.`, a different key from `./pkg`
        let atRoot = try harness.run(["exec", "--key-cwd", "relative:.", "--"] + command, directory: first)
        #expect(atRoot.status == 0)
        #expect(harness.lineCount("marker") == 2)
        #expect(try harness.run(["ls"]).outputText.contains("(in .)"))
    }

    @Test func theDefaultKeyStillHoldsTheAbsoluteDirectory() throws {
        // Given the same command run in two folders without --key-cwd (or with --key-cwd absolute)
        let harness = try StrataHarness()
        let one = try harness.makeFolder("one/pkg")
        let two = try harness.makeFolder("two/pkg")
        let command = ["sh", "-c", "echo run >> \"$0\"", harness.path("marker")]
        #expect(try harness.run(["exec", "--"] + command, directory: one).status == 0)
        #expect(try harness.run(["exec", "--key-cwd", "absolute", "--"] + command, directory: one).status == 0)
        #expect(try harness.run(["exec", "--"] + command, directory: two).status == 0)
        // Then each folder ran it once: the absolute directory is part of the key
        #expect(harness.lineCount("marker") == 2)
        #expect(try harness.run(["ls"]).outputText.contains("(in \(one.path))"))
    }

    @Test func keyingWithoutADirectorySharesAResultAcrossFolders() throws {
        let harness = try StrataHarness()
        let one = try harness.makeFolder("one")
        let two = try harness.makeFolder("two/deeper")
        let command = ["sh", "-c", "echo run >> \"$0\"; echo same", harness.path("marker")]
        // When the command runs in two unrelated folders with --key-cwd none
        #expect(try harness.run(["exec", "--key-cwd", "none", "--"] + command, directory: one).status == 0)
        let replayed = try harness.run(["exec", "--key-cwd", "none", "--"] + command, directory: two)
        // Then the second replays the first, and the entry names no directory
        #expect(replayed.outputText == "same\n")
        #expect(harness.lineCount("marker") == 1)
        let list = try harness.run(["ls"]).outputText
        #expect(list.hasSuffix("exec: sh -c 'echo run >> \"$0\"; echo same' \(harness.path("marker"))\n"), "\(list)")
        let json = try harness.run(["ls", "--json"]).standardOutput
        let objects = try #require(try JSONSerialization.jsonObject(with: json) as? [[String: Any]])
        #expect(objects.first?["cwd"] is NSNull)
        // And a run keyed on its directory is another entry
        #expect(try harness.run(["exec", "--"] + command, directory: one).status == 0)
        #expect(harness.lineCount("marker") == 2)
    }

    @Test func aDirectoryOutsideTheRootIsAUsageErrorNotAKey() throws {
        // Given a root and a working directory beside it (a sibling whose name extends the root's)
        let harness = try StrataHarness()
        let root = try harness.makeFolder("work/a")
        let outside = try harness.makeFolder("work/ab")
        let command = ["touch", harness.path("marker")]

        // When exec is keyed relative to the root from outside it
        let result = try harness.run(
            ["exec", "--key-cwd", "relative:\(root.path)", "--"] + command, directory: outside)

        // Then it is refused, naming both directories, and nothing ran or was stored
        #expect(result.status == 2)
        let first = result.errorLines.first ?? ""
        #expect(
            first.hasPrefix(
                "strata: the working directory \(outside.path) is not inside the --key-cwd root \(root.path)"),
            "\(first)")
        #expect(!FileManager.default.fileExists(atPath: harness.path("marker")))
        #expect(!FileManager.default.fileExists(atPath: harness.store.path))
    }

    @Test(arguments: ["relative:", "relative:/no/such/root", "sideways", "Absolute"])
    func aBadKeyCwdValueIsAUsageError(value: String) throws {
        let harness = try StrataHarness()
        let result = try harness.run(["exec", "--key-cwd", value, "--", "true"])
        #expect(result.status == 2)
        #expect(result.errorLines.first?.hasPrefix("strata: option --key-cwd") == true, "\(result.errorText)")
    }
}

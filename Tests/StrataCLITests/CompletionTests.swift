import Foundation
import StrataTestSupport
import Testing

/// `strata completion bash|zsh|fish`: each script parses in its shell and names every command, the bash
/// script completes what the parser accepts, and an unknown shell is one line and exit 2.
@Suite(.serialized)
struct CompletionTests {
    static let commands = ["set", "get", "rm", "clear", "ls", "stats", "trim", "verify", "exec", "completion", "help"]

    @Test(arguments: ["bash", "zsh", "fish"])
    func eachScriptParsesInItsShellAndNamesEveryCommand(shell: String) throws {
        // Given the script for SHELL
        let harness = try StrataHarness()
        let result = try harness.run(["completion", shell], usesStore: false)
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
        let script = result.outputText
        // Then it names every command and the options users reach for
        for command in Self.commands {
            #expect(script.contains(command), "the \(shell) script does not name \(command)")
        }
        for option in ["--tag", "--key-cwd", "--ttl", "--store", "--json", "--redis-ca-file"] {
            #expect(script.contains(String(shell == "fish" ? option.dropFirst(2) : option[...])))
        }
        #expect(!script.contains("background-refresh"))
        // And the shell reads it without a syntax error (`SHELL -n` parses without running)
        guard let shellPath = Self.executable(shell) else {
            print("skipped: \(shell) is not installed, so its script's syntax was not checked")
            return
        }
        let file = harness.path("strata.\(shell)")
        try result.standardOutput.write(to: URL(fileURLWithPath: file))
        let check = try Self.runShell(shellPath, ["-n", file])
        #expect(check.status == 0, "\(shell) -n: \(check.output)")
    }

    @Test(arguments: [
        (
            "strata ''",
            ["clear", "completion", "exec", "get", "help", "ls", "migrate", "rm", "set", "stats", "trim", "verify"]
        ),
        ("strata ex", ["exec"]),
        ("strata completion ''", ["bash", "fish", "zsh"]),
        ("strata help st", ["stats"]),
        ("strata exec --key-cwd ''", ["absolute", "none", "relative:"]),
        ("strata exec --key-c", ["--key-cwd"]),
        ("strata --store /tmp ls --j", ["--json"]),
        ("strata rm --t", ["--tag"]),
        ("strata set k --ttl ''", []),
        ("strata --max-size 1G ex", ["exec"]),
    ])
    func theBashScriptCompletesWhatTheParserAccepts(line: String, expected: [String]) throws {
        // Given the bash script loaded in a shell
        guard let bash = Self.executable("bash") else {
            print("skipped: bash is not installed")
            return
        }
        let harness = try StrataHarness()
        let file = harness.path("strata.bash")
        try harness.run(["completion", "bash"], usesStore: false).standardOutput.write(to: URL(fileURLWithPath: file))
        // When completion runs on LINE with the cursor on its last word
        let program = """
            source "$1"
            COMP_WORDS=(\(line)); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
            _strata
            printf '%s\\n' "${COMPREPLY[@]}" | sort -u
            """
        let result = try Self.runShell(bash, ["-c", program, "bash", file])
        // Then it offers exactly the words the parser would accept there
        #expect(result.status == 0)
        #expect(result.output.split(separator: "\n").map(String.init) == expected)
    }

    @Test
    func theOptionsOfACommandAreOfferedOnlyForIt() throws {
        guard let bash = Self.executable("bash") else {
            print("skipped: bash is not installed")
            return
        }
        let harness = try StrataHarness()
        let file = harness.path("strata.bash")
        try harness.run(["completion", "bash"], usesStore: false).standardOutput.write(to: URL(fileURLWithPath: file))
        let program = """
            source "$1"
            COMP_WORDS=(strata ls --); COMP_CWORD=2
            _strata
            printf '%s\\n' "${COMPREPLY[@]}"
            """
        let offered = Set(try Self.runShell(bash, ["-c", program, "bash", file]).output.split(separator: "\n"))
        // `ls` takes --json and the global options, never exec's or set's
        #expect(offered.contains("--json"))
        #expect(offered.contains("--store"))
        #expect(!offered.contains("--ttl"))
        #expect(!offered.contains("--key-cwd"))
        #expect(!offered.contains("--background-refresh"))
    }

    @Test
    func anUnknownShellIsOneLineAndStatusTwo() throws {
        let harness = try StrataHarness()
        let result = try harness.run(["completion", "tcsh"])
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines == ["strata: no completion for the shell 'tcsh'; strata completion bash|zsh|fish"])
        // And a script is text about the tool: no store or key file is made for it
        #expect(try harness.run(["completion", "bash"]).status == 0)
        #expect(!FileManager.default.fileExists(atPath: harness.store.path))
    }

    // MARK: - Helpers

    /// The first `name` on `PATH`, or `nil`.
    static func executable(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// Runs `shell ARGUMENTS` to its end; stdout and stderr together.
    static func runShell(_ shell: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = try ChildProcess(
            shell, arguments, standardInput: .inherit(STDIN_FILENO), standardOutput: .pipe,
            standardError: .standardOutput)
        let output = process.standardOutput?.readDataToEndOfFile() ?? Data()
        return (process.waitUntilExit().shellStatus, String(decoding: output, as: UTF8.self))
    }
}

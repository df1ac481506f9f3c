import Foundation
import Testing

/// `exec` in a pipeline whose reader goes away, and the cap on the output it collects.
@Suite(.serialized)
struct ExecOutputLimitTests {
    @Test func closedStandardOutputStopsTheCommandQuietlyAndKeepsNothing() throws {
        // Given an endless command whose output goes through head -c 10
        // (timeout only bounds the test if strata never ends; it is not expected to fire)
        let harness = try StrataHarness()
        let script = #"""
            { timeout 60 "$STRATA" --store "$STORE" exec -- yes; echo $? > "$ROOT/status"; } | head -c 10 > "$ROOT/head"
            """#

        // When the pipeline runs
        let result = try harness.runShell(script)

        // Then strata stopped like a pipeline member killed by SIGPIPE: status 141, no message, no entry
        #expect(result.status == 0)
        #expect(harness.contents("head") == Data("y\ny\ny\ny\ny\n".utf8))
        #expect(String(decoding: harness.contents("status"), as: UTF8.self) == "141\n")
        #expect(result.standardError.isEmpty)
        let list = try harness.run(["ls"])
        #expect(list.status == 0)
        #expect(list.standardOutput.isEmpty)
    }

    @Test func getIntoAClosedPipeEndsQuietlyWith141() throws {
        // Given a value larger than a pipe holds, read through head -c 10
        let harness = try StrataHarness()
        let stored = try harness.run(["set", "big"], stdin: Data(repeating: UInt8(ascii: "v"), count: 4 << 20))
        #expect(stored.status == 0)
        let script = #"""
            { timeout 60 "$STRATA" --store "$STORE" get big; echo $? > "$ROOT/status"; } | head -c 10 > "$ROOT/head"
            """#

        // When the reader goes away after 10 bytes
        let result = try harness.runShell(script)

        // Then strata ends like cat would in that pipeline: 141, nothing on stderr, the entry kept
        #expect(harness.contents("head") == Data(repeating: UInt8(ascii: "v"), count: 10))
        #expect(String(decoding: harness.contents("status"), as: UTF8.self) == "141\n")
        #expect(result.standardError.isEmpty)
        #expect(try harness.run(["ls"]).outputText.contains("big"))
    }

    @Test func aReplayIntoAClosedPipeEndsQuietlyWith141() throws {
        // Given a kept run whose output is larger than a pipe holds
        let harness = try StrataHarness()
        let command = ["exec", "--", "head", "-c", "4194304", "/dev/zero"]
        #expect(try harness.run(command).status == 0)
        let script = #"""
            { timeout 60 "$STRATA" --store "$STORE" exec -- head -c 4194304 /dev/zero; echo $? > "$ROOT/status"; } \
                | head -c 10 > "$ROOT/head"
            """#

        // When its replay's reader goes away after 10 bytes
        let result = try harness.runShell(script)

        // Then the replay ends as the run would: 141, nothing on stderr, the result still kept
        #expect(harness.contents("head") == Data(count: 10))
        #expect(String(decoding: harness.contents("status"), as: UTF8.self) == "141\n")
        #expect(result.standardError.isEmpty)
        #expect(try harness.run(["ls"]).outputText.contains("exec: head -c 4194304 /dev/zero"))
    }

    @Test func outputOverTheCapIsShownWholeButNotKept() throws {
        // Given a command writing 5000 bytes, run twice with a 1000-byte cap
        let harness = try StrataHarness()
        let command = ["sh", "-c", "echo run >> \"$0\"; head -c 5000 /dev/zero", harness.path("marker")]
        let first = try harness.run(["exec", "--max-output", "1000", "--"] + command)
        let second = try harness.run(["exec", "--max-output", "1000", "--"] + command)

        // Then both runs showed every byte and warned once, and nothing was kept (it ran twice)
        for result in [first, second] {
            #expect(result.status == 0)
            #expect(result.standardOutput == Data(count: 5000))
            #expect(
                result.errorLines == [
                    "strata: warning: result not cached: the command's output passed the cap of 1000 bytes "
                        + "(--max-output); it was shown but not kept"
                ])
        }
        #expect(harness.lineCount("marker") == 2)
        #expect(try harness.run(["ls"]).standardOutput.isEmpty)
    }

    @Test func storeSizeLimitCapsTheOutputByDefault() throws {
        let harness = try StrataHarness()
        let result = try harness.run(["--max-size", "100KB", "exec", "--", "head", "-c", "1000000", "/dev/zero"])
        #expect(result.status == 0)
        #expect(result.standardOutput.count == 1_000_000)
        #expect(result.errorLines.count == 1)
        #expect(result.errorLines.first?.contains("passed the cap of 100000 bytes (--max-size)") == true)
        #expect(try harness.run(["ls"]).standardOutput.isEmpty)
    }

    @Test func memoryStaysBoundedPastTheCap() throws {
        // Given a command that writes 256 MiB and then reports strata's peak resident memory (its parent)
        let harness = try StrataHarness()
        let script = #"""
            "$STRATA" --store "$STORE" exec --max-output 1MiB -- sh -c 'head -c 268435456 /dev/zero; grep VmHWM /proc/$PPID/status >&2' > /dev/null
            """#

        // When it runs
        let result = try harness.runShell(script)

        // Then strata's peak stayed far below the output's size
        let line = result.errorLines.first { $0.hasPrefix("VmHWM:") } ?? ""
        let kibibytes = Int(line.split(separator: " ").dropFirst().first ?? "") ?? Int.max
        #expect(result.status == 0)
        #expect(kibibytes < 128 * 1024, "peak resident memory \(kibibytes) KiB")
        #expect(result.errorLines.contains { $0.contains("passed the cap of 1048576 bytes") })
    }
}

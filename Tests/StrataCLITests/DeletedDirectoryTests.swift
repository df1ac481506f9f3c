import Foundation
import Testing

/// `exec` from a working directory that no longer exists: `getcwd` fails, so a key on the directory
/// cannot be made.
@Suite(.serialized)
struct DeletedDirectoryTests {
    @Test func execFromADeletedDirectoryRefusesToKeyOnIt() throws {
        // Given two directories, each deleted while a shell stands in it
        let harness = try StrataHarness()
        let script = """
            for d in gA gB; do
              (mkdir "$ROOT/$d" && cd "$ROOT/$d" && rmdir "$ROOT/$d" && \
                "$STRATA" --store "$STORE" exec -- sh -c "echo $d")
              echo "status $?"
            done
            """

        // When exec runs in each with the default --key-cwd absolute
        let result = try harness.runShell(script)

        // Then each run fails with exit 3 and one line, nothing runs, and nothing is stored
        #expect(result.outputText == "status 3\nstatus 3\n")
        #expect(result.errorLines.count == 2)
        for line in result.errorLines {
            #expect(line.hasPrefix("strata: cannot determine the working directory ("))
        }
        let list = try harness.run(["ls"])
        #expect(list.status == 0)
        #expect(list.outputText.isEmpty)
    }

    @Test func execWithKeyCwdNoneWorksFromADeletedDirectory() throws {
        // Given a directory deleted while a shell stands in it
        let harness = try StrataHarness()
        let script = """
            mkdir "$ROOT/gone" && cd "$ROOT/gone" && rmdir "$ROOT/gone" && \
              "$STRATA" --store "$STORE" exec --key-cwd none -- echo hi
            """

        // When exec runs there with --key-cwd none, which needs no directory
        let result = try harness.runShell(script)

        // Then the command runs and its result is kept
        #expect(result.status == 0)
        #expect(result.outputText == "hi\n")
        #expect(result.errorText.isEmpty)
        #expect(try harness.run(["ls"]).outputText.contains("exec: echo hi"))
    }
}

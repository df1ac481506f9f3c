import Foundation
import Testing

/// `set`, `get`, `rm`, `--ttl`, keys and stores, driven through the built binary.
@Suite(.serialized)
struct KeyValueCommandTests {
    @Test func setAndGetOfFiveMebibyteBinaryFileIsByteIdentical() throws {
        // Given 5 MiB of a system executable (binary: NUL bytes, every byte value)
        let harness = try StrataHarness()
        let payload = try SystemSample.bytes(count: 5 * 1024 * 1024)
        #expect(payload.count == 5 * 1024 * 1024)
        #expect(payload.contains(0))

        // When it is stored from stdin and read back
        let set = try harness.run(["set", "blob"], stdin: payload)
        let get = try harness.run(["get", "blob"])

        // Then the bytes are identical and nothing was printed on the side
        #expect(set.status == 0)
        #expect(set.standardOutput.isEmpty)
        #expect(get.status == 0)
        #expect(get.standardOutput == payload)
        #expect(get.standardError.isEmpty)
    }

    @Test func valueArgumentRoundTripsAndRemovalMakesItAMiss() throws {
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "greeting", "héllo wörld"]).status == 0)
        #expect(try harness.run(["get", "greeting"]).outputText == "héllo wörld")

        #expect(try harness.run(["rm", "greeting"]).status == 0)
        let afterRemoval = try harness.run(["get", "greeting"])
        #expect(afterRemoval.status == 1)
        #expect(afterRemoval.standardOutput.isEmpty)
        // Removing again is not an error (like rm -f).
        #expect(try harness.run(["rm", "greeting"]).status == 0)
    }

    @Test func missExitsOneAndPrintsNothing() throws {
        let harness = try StrataHarness()
        let result = try harness.run(["get", "absent"])
        #expect(result.status == 1)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.isEmpty)
    }

    @Test func timeToLiveExpiresAtTheBoundaryWithoutWaiting() throws {
        // Given an entry written with a ten-minute TTL
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "session", "token", "--ttl", "10m"]).status == 0)

        // Then it is live shortly before the TTL and a miss after it (clock moved by the test-only offset)
        let before = try harness.run(["get", "session"], clockOffset: 540)
        #expect(before.status == 0)
        #expect(before.outputText == "token")
        let after = try harness.run(["get", "session"], clockOffset: 601)
        #expect(after.status == 1)
        #expect(after.standardOutput.isEmpty)
    }

    @Test func parallelGetsOfAnExpiredKeyAllReportAMissCleanly() throws {
        // Given a key that has expired
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "short", String(repeating: "x", count: 10_000), "--ttl", "1s"]).status == 0)

        // When 32 processes read it at once
        let runs = try (0..<32).map { _ in try harness.start(["get", "short"], clockOffset: 100) }
        let results = try runs.map { try $0.wait() }

        // Then every one is a clean miss
        for result in results {
            #expect(result.status == 1)
            #expect(result.standardOutput.isEmpty)
            #expect(result.errorText == "")
        }
    }

    @Test func wrongMasterKeyExitsThreeAndTheRightKeyStillFindsEveryEntry() throws {
        // Given two entries under the store's key
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "a", "alpha"]).status == 0)
        #expect(try harness.run(["set", "b", "beta"]).status == 0)

        // When the store is opened with another key
        let wrong = try harness.run(["get", "a"], key: StrataHarness.randomKey())
        let wrongList = try harness.run(["ls"], key: StrataHarness.randomKey())

        // Then it fails with one line naming the store, and nothing is lost
        #expect(wrong.status == 3)
        #expect(wrong.standardOutput.isEmpty)
        #expect(wrong.errorLines.count == 1)
        #expect(wrong.errorText.contains(harness.store.lastPathComponent))
        #expect(wrongList.status == 3)
        #expect(try harness.run(["get", "a"]).outputText == "alpha")
        #expect(try harness.run(["get", "b"]).outputText == "beta")
    }

    @Test(arguments: ["not base64!", "AAAA", Data(count: 31).base64EncodedString()])
    func malformedMasterKeyExitsThree(key: String) throws {
        let harness = try StrataHarness()
        let result = try harness.run(["get", "a"], key: key)
        #expect(result.status == 3)
        #expect(result.errorLines.count == 1)
        #expect(result.errorText.contains("STRATA_MASTER_KEY"))
        #expect(result.standardOutput.isEmpty)
    }

    @Test func storeWithoutMasterKeyGetsItsOwnKeyFile() throws {
        // Given two stores opened without STRATA_MASTER_KEY
        let harness = try StrataHarness()
        let other = harness.root.appendingPathComponent("other-store").path
        #expect(try harness.run(["set", "k", "first"], key: .some(nil)).status == 0)
        #expect(
            try harness.run(["--store", other, "set", "k", "second"], key: .some(nil), usesStore: false).status == 0)

        // Then each finds its own value again, and each has its own key file next to the default key files
        #expect(try harness.run(["get", "k"], key: .some(nil)).outputText == "first")
        let second = try harness.run(["get", "k", "--store", other], key: .some(nil), usesStore: false)
        #expect(second.outputText == "second")
        let keyFiles = try FileManager.default.contentsOfDirectory(
            atPath: harness.path("data/strata/keys/strata-stores"))
        #expect(keyFiles.filter { $0.hasSuffix(".key") }.count == 2)
    }

    @Test func unusableStoreFolderExitsThreeWithOneLineNamingIt() throws {
        // Given a --store path that is a regular file, not a folder
        let harness = try StrataHarness()
        let file = harness.root.appendingPathComponent("not-a-folder")
        try Data("x".utf8).write(to: file)

        // When any store command runs there
        let result = try harness.run(["--store", file.path, "set", "k", "v"], usesStore: false)

        // Then it is a store failure, reported in one line naming the store, and the file is untouched
        #expect(result.status == 3)
        #expect(result.errorLines.count == 1)
        #expect(result.errorText.contains(file.path))
        #expect(try Data(contentsOf: file) == Data("x".utf8))
    }

    @Test func reservedExecNamespaceIsRefusedForSetAndGet() throws {
        let harness = try StrataHarness()
        let result = try harness.run(["set", "exec:mine", "v"])
        #expect(result.status == 2)
        #expect(try harness.run(["get", "exec:mine"]).status == 2)
    }

    @Test func setWithoutAValueAtATerminalSaysItIsReadingStandardInput() throws {
        // Given `strata set k` run on a terminal (script(1) gives it a pseudo-terminal; its stdin ends at once)
        let harness = try StrataHarness()
        let script = #"""
            timeout 20 script -qec "\"$STRATA\" --store \"$STORE\" set k" /dev/null < /dev/null > "$ROOT/screen"
            """#

        // When it runs
        let result = try harness.runShell(script)

        // Then the terminal shows one line saying where the value comes from
        #expect(result.status == 0)
        let screen = String(decoding: harness.contents("screen"), as: UTF8.self)
        #expect(screen.contains("strata: reading the value from standard input; end it with Ctrl-D"))
    }

    @Test func setFromAPipePrintsNothingButTheValueIsStored() throws {
        let harness = try StrataHarness()
        let stored = try harness.run(["set", "k"], stdin: Data("v".utf8))
        #expect(stored.status == 0)
        #expect(stored.standardError.isEmpty)
        #expect(try harness.run(["get", "k"]).outputText == "v")
    }
}

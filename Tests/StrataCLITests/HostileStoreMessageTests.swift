import DiskCache
import Foundation
import StrataTestSupport
import Testing

@testable import strata

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What the commands say, and do, when part of the store cannot be read or written (Docs/CLI.md,
/// Docs/Security.md "A hostile store folder"): `cannot read PATH: REASON`, never a type's dump.
@Suite struct HostileStoreMessageTests {
    static let timeout = 30.0

    /// A file store holding `k` and the path of the fan-out folder its entry sits in.
    static func storeWithOneEntry(_ harness: StrataHarness) throws -> String {
        try harness.makeFileStore()
        #expect(try harness.run(["set", "k", "v"]).status == 0)
        let name = try #require(HostileStoreTests.entryNames(harness).first)
        return harness.store.path + "/entries/" + name.prefix(2)
    }

    @Test func setReadsStandardInputOnlyUpToTheLargestValueTheStoreCanHold() {
        // Without --max-size the bound is the entry format's (2 GiB − 1 of key and value, plus 80 bytes)
        #expect(DiskCacheConfiguration.largestEntrySize == Int(Int32.max) + 80)
        #expect(ValueCommands.inputLimit(maxBytes: nil) == DiskCacheConfiguration.largestEntrySize)
        #expect(ValueCommands.inputLimit(maxBytes: .max) == DiskCacheConfiguration.largestEntrySize)
        // and with it, the smaller of the two
        #expect(ValueCommands.inputLimit(maxBytes: 1000) == 1000)
        #expect(ValueCommands.inputLimit(maxBytes: 0) == 0)
    }

    @Test func storeFailuresNameTheCodeSentenceAndPathButNotTheUnderlyingErrorsDump() {
        let error = CacheError.posix(ENOTDIR, "cannot open folder", path: "/s/entries/ab")

        guard case .store(let text) = CLIFailure.store(error, store: "/s"),
            case .store(let readText) = CLIFailure.read(error, store: "/s")
        else {
            Issue.record("expected store failures")
            return
        }

        #expect(text == "store /s: io: cannot open folder: Not a directory (path: /s/entries/ab)")
        #expect(readText == "store /s: cannot read /s/entries/ab: Not a directory")
    }

    @Test func getThroughALinkAtAFanOutFolderSaysCannotReadPathReason() throws {
        // Given a symbolic link planted where the entry's fan-out folder belongs
        let harness = try StrataHarness()
        let fanOut = try Self.storeWithOneEntry(harness)
        try FileManager.default.removeItem(atPath: fanOut)
        try FileManager.default.createSymbolicLink(atPath: fanOut, withDestinationPath: harness.root.path)

        // When the key is read
        let result = try #require(try harness.start(["get", "k"]).wait(timeout: Self.timeout))

        // Then one line names the folder and the system's reason, with no raw NSError text
        #expect(result.status == 3)
        #expect(result.errorLines == ["strata: store \(harness.store.path): cannot read \(fanOut): Not a directory"])
    }

    @Test func statsNamesAFanOutFolderItCannotRead() throws {
        // Given a store of two entries, one fan-out folder replaced by a symbolic link
        let harness = try StrataHarness()
        let fanOut = try Self.storeWithOneEntry(harness)
        try FileManager.default.removeItem(atPath: fanOut)
        try FileManager.default.createSymbolicLink(atPath: fanOut, withDestinationPath: harness.root.path)

        // When stats runs
        let result = try #require(try harness.start(["stats"]).wait(timeout: Self.timeout))

        // Then it still reports, and one warning line says what its totals leave out
        #expect(result.status == 0)
        #expect(result.outputText.split(separator: "\n").contains { $0.split(separator: " ") == ["entries", "0"] })
        #expect(
            result.errorLines == [
                "strata: warning: cannot read \(fanOut): a symbolic link the store did not create; left in place"
            ])
    }

    @Test(.enabled(if: Mounts.available, Comment(rawValue: Mounts.requirement)))
    func clearThatCannotRemoveAnEntryNamesItWithoutATypeDump() throws {
        // Given a store whose one fan-out folder cannot be changed (read-only even for root)
        let harness = try StrataHarness()
        let fanOut = try Self.storeWithOneEntry(harness)
        let mount = try Mounts.bindReadOnly(URL(fileURLWithPath: fanOut), at: URL(fileURLWithPath: fanOut))
        defer { mount.unmount() }

        // When the store is cleared
        let result = try #require(try harness.start(["clear"]).wait(timeout: Self.timeout))

        // Then one line names the first item left and the system's reason, in words
        #expect(result.status == 3)
        #expect(result.errorLines.count == 1)
        let line = try #require(result.errorLines.first)
        #expect(line.contains("First: \(fanOut)"))
        #expect(line.contains("Read-only file system"))
        #expect(!line.contains("FileError"))
        #expect(!line.contains("cause:"))
        #expect(!line.contains("Error Domain"))
    }

    @Test(.enabled(if: Mounts.available, Comment(rawValue: Mounts.requirement)), arguments: [false, true])
    func execOnAStoreItCannotChangeRunsTheCommandWithoutCaching(fileStore: Bool) throws {
        // Given a store (the tool's own, or a file store) this process can only read
        let harness = try StrataHarness()
        if fileStore { try harness.makeFileStore() }
        #expect(try harness.run(["set", "k", "v"]).status == 0)
        let mount = try Mounts.bindReadOnly(harness.store, at: harness.store)
        defer { mount.unmount() }
        let command = ["exec", "--", "/bin/sh", "-c", "echo out; echo err >&2; exit 0"]

        // When exec runs a command twice
        let first = try #require(try harness.start(command).wait(timeout: Self.timeout))
        let second = try #require(try harness.start(command).wait(timeout: Self.timeout))

        // Then each run passes the command's output and status through, with one warning line after it
        for result in [first, second] {
            #expect(result.status == 0)
            #expect(result.outputText == "out\n")
            #expect(
                result.errorLines == [
                    "err",
                    "strata: warning: result not cached: store \(harness.store.path) is read-only for this "
                        + "process; the command ran without caching",
                ])
        }
        // and the entry written before is still served
        #expect(try harness.run(["get", "k"]).outputText == "v")
    }
}

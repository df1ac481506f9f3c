import Foundation
import Testing

/// Unreadable entries, symbolic links to a store, and missing key files.
@Suite(.serialized)
struct StoreTroubleTests {
    /// Stores k1…k8 in a file store, then replaces one entry file with a directory; returns that key.
    private func storeWithOneDirectoryEntry(_ harness: StrataHarness) throws -> String {
        try harness.makeFileStore()
        for index in 1...8 { #expect(try harness.run(["set", "k\(index)", "v\(index)"]).status == 0) }
        let entries = harness.store.appendingPathComponent("entries")
        let files = try FileManager.default.subpathsOfDirectory(atPath: entries.path).filter { $0.count == 67 }
        let victim = entries.appendingPathComponent(try #require(files.sorted().first))
        try FileManager.default.removeItem(at: victim)
        try FileManager.default.createDirectory(at: victim, withIntermediateDirectories: false)
        for index in 1...8 where try harness.run(["get", "k\(index)"]).status != 0 { return "k\(index)" }
        return ""
    }

    @Test func failingGetOfAnUnreadableEntryPrintsExactlyOneLine() throws {
        // Given a store whose entry for one key is a directory
        let harness = try StrataHarness()
        let key = try storeWithOneDirectoryEntry(harness)

        // When that key is read
        let result = try harness.run(["get", key])

        // Then it fails with one line, the error, and no separate warning
        #expect(result.status == 3)
        #expect(result.standardOutput.isEmpty)
        #expect(result.errorLines.count == 1)
        #expect(result.errorLines.first?.hasPrefix("strata: store ") == true)
    }

    @Test func verifyCountsTheUnreadableEntryAndExitsThree() throws {
        let harness = try StrataHarness()
        _ = try storeWithOneDirectoryEntry(harness)

        let result = try harness.run(["verify"])

        #expect(result.status == 3)
        #expect(result.outputText == "checked 8 entries: removed 0 bad, 0 expired, 1 unreadable (left in place)\n")
        #expect(result.errorLines.count == 1)
        #expect(result.errorLines.first?.contains(": a folder, not a regular file; left in place") == true)
        #expect(result.errorLines.first?.contains("cannot read /") == true)
    }

    @Test func storeNamedThroughASymbolicLinkFindsTheSameKeyFile() throws {
        // Given a store created by its real path with a per-store key file (no STRATA_MASTER_KEY)
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "k", "v"], key: .some(nil)).status == 0)
        let link = harness.root.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: harness.store)

        // When it is read through a symbolic link
        let result = try harness.run(["--store", link.path, "get", "k"], key: .some(nil), usesStore: false)

        // Then the same key opens it, and no second key file appeared
        #expect(result.status == 0)
        #expect(result.outputText == "v")
        let keys = try FileManager.default.contentsOfDirectory(atPath: harness.path("data/strata/keys/strata-stores"))
        #expect(keys.count == 1)
    }

    @Test func existingStoreWithoutItsKeyFileIsReportedAndNoKeyIsCreated() throws {
        // Given a store whose per-store key file was lost
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "k", "v"], key: .some(nil)).status == 0)
        let keys = harness.path("data/strata/keys/strata-stores")
        for name in try FileManager.default.contentsOfDirectory(atPath: keys) {
            try FileManager.default.removeItem(atPath: keys + "/" + name)
        }

        // When it is opened without STRATA_MASTER_KEY
        let result = try harness.run(["get", "k"], key: .some(nil))

        // Then it fails with one line saying so, and creates no useless key
        #expect(result.status == 3)
        #expect(result.errorLines.count == 1)
        #expect(result.errorLines.first?.contains("no key file for this store at ") == true)
        #expect(result.errorLines.first?.contains("set STRATA_MASTER_KEY to the key it was created with") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: keys).isEmpty)
    }

    @Test func theDefaultStoreWithoutItsKeyFileIsReportedAndNoKeyIsCreated() throws {
        // Given the default store (no --store), whose default key file was lost
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "k", "v"], key: .some(nil), usesStore: false).status == 0)
        let keyFile = harness.path("data/strata/keys/strata.key")
        try FileManager.default.removeItem(atPath: keyFile)

        // When it is opened without STRATA_MASTER_KEY
        let result = try harness.run(["get", "k"], key: .some(nil), usesStore: false)

        // Then one line names the store, the missing key file and the way out; no new key was created
        #expect(result.status == 3)
        #expect(result.errorLines.count == 1)
        #expect(result.errorLines.first?.contains(harness.path("cache/Strata/strata")) == true)
        #expect(result.errorLines.first?.contains("no key file for this store at \(keyFile)") == true)
        #expect(result.errorLines.first?.contains("set STRATA_MASTER_KEY") == true)
        #expect(!FileManager.default.fileExists(atPath: keyFile))
    }

    @Test func aStoreThatCannotBeOpenedLeavesNoKeyFileBehind() throws {
        // Given a --store path whose parent is a regular file, so the store folder cannot be created
        let harness = try StrataHarness()
        _ = FileManager.default.createFile(atPath: harness.path("blocker"), contents: Data("x".utf8))

        // When a command opens it without STRATA_MASTER_KEY
        let result = try harness.runShell(#""$STRATA" --store "$ROOT/blocker/store" set k v"#, key: .some(nil))

        // Then it fails, and the key file it created for that store is gone again
        #expect(result.status == 3)
        let keys = harness.path("data/strata/keys/strata-stores")
        let left = (try? FileManager.default.contentsOfDirectory(atPath: keys)) ?? []
        #expect(left.isEmpty)
    }
}

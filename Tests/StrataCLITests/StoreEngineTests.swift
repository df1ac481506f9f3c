import Foundation
import StrataTestSupport
import Testing

/// Which engine the tool's stores use (Docs/CLI.md, "Where the store and its key live"): a new store is a
/// SQLite store; an existing file store keeps its engine until `strata migrate` moves it.
@Suite struct StoreEngineTests {
    /// The version byte of the store's key-check record (Docs/DiskFormat.md): 1 for files, 2 for SQLite.
    static func recordedVersion(_ store: URL) throws -> UInt8 {
        let record = try Data(contentsOf: store.appendingPathComponent("store.check"))
        return try #require(record.count > 4 ? record[record.startIndex + 4] : nil)
    }

    static func exists(_ store: URL, _ name: String) -> Bool {
        FileManager.default.fileExists(atPath: store.appendingPathComponent(name).path)
    }

    @Test func aNewStoreIsASQLiteStore() throws {
        // Given no store yet, named with --store or not
        let harness = try StrataHarness()
        let defaultStore = harness.root.appendingPathComponent("cache/Strata/strata")

        // When a value is stored in each
        #expect(try harness.run(["set", "k", "v"]).status == 0)
        #expect(try harness.run(["set", "k", "v"], usesStore: false).status == 0)

        // Then each is a SQLite store: recorded as one, a database and no entry files
        for store in [harness.store, defaultStore] {
            #expect(try Self.recordedVersion(store) == 2, "\(store.path)")
            #expect(Self.exists(store, "store.sqlite"), "\(store.path)")
            #expect(!Self.exists(store, "entries"), "\(store.path)")
        }
        #expect(try harness.run(["get", "k"]).outputText == "v")
        #expect(try harness.run(["get", "k"], usesStore: false).outputText == "v")
    }

    @Test func aDatabaseThatCannotBeUsedIsQuarantinedWithOneWarning() throws {
        // Given a store holding an entry, whose database is then overwritten with bytes that are not SQLite's
        let harness = try StrataHarness()
        #expect(try harness.run(["set", "k", "v"]).status == 0)
        let database = harness.store.appendingPathComponent("store.sqlite")
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database.path + suffix) }
        try Data(repeating: 0x41, count: 8_192).write(to: database)

        // When the store is listed
        let listing = try harness.run(["ls"])

        // Then the store starts again empty, and one warning says so and where the database went
        #expect(listing.status == 0)
        #expect(listing.outputText.isEmpty)
        #expect(listing.errorText.hasPrefix("strata: warning: store 'strata': "), "\(listing.errorText)")
        #expect(listing.errorText.contains("the database could not be used"))
        #expect(listing.errorText.contains("/quarantine"))
        #expect(listing.errorText.split(separator: "\n").count == 1)
        // And the next command, on the new database, says nothing more
        let again = try harness.run(["get", "k"])
        #expect(again.status == 1 && again.errorText.isEmpty, "\(again.errorText)")
    }

    @Test func anExistingFileStoreKeepsItsEngineUntilMigrated() throws {
        // Given a file store, written to by the tool
        let harness = try StrataHarness()
        try harness.makeFileStore()
        #expect(try harness.run(["set", "a", "1"]).status == 0)
        #expect(try harness.run(["set", "b", "2", "--tag", "t"]).status == 0)

        // Then it is still a file store: one file per entry, no database
        #expect(try Self.recordedVersion(harness.store) == 1)
        #expect(entryFileNames(inStore: harness.store).count == 2)
        #expect(!Self.exists(harness.store, "store.sqlite"))

        // When it is migrated
        let migrate = try harness.run(["migrate"])

        // Then both entries moved, the store is a SQLite store, and the tool reads them from it
        #expect(migrate.status == 0)
        #expect(migrate.outputText == "moved 2 entries to the SQLite engine\n")
        #expect(migrate.errorText.isEmpty)
        #expect(try Self.recordedVersion(harness.store) == 2)
        #expect(!Self.exists(harness.store, "entries"))
        #expect(try harness.run(["get", "a"]).outputText == "1")
        #expect(try harness.run(["get", "b"]).outputText == "2")
        // and its tags came along
        #expect(try harness.run(["rm", "--tag", "t"]).status == 0)
        #expect(try harness.run(["get", "b"]).status == 1)
        #expect(try harness.run(["get", "a"]).outputText == "1")

        // and a second migration finds nothing to move
        let again = try harness.run(["migrate"])
        #expect(again.status == 0)
        #expect(again.outputText == "the store already uses the SQLite engine (or holds nothing to move)\n")
    }
}

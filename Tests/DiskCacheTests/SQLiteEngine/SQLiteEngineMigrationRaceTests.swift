import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// Another process's `migrateStoreToSQLite()` committing while this one opens or uses the store as a file
/// store (found by `StrataTorture first-use`: a `strata get` racing `strata migrate` exited 3 with "uses
/// key-check format version 2; this build reads versions 1 … and 2").
@Suite struct SQLiteEngineMigrationRaceTests {
    let folder = TemporaryFolder()
    let clock = ManualClock()

    func configuration(_ engine: DiskCacheConfiguration.Engine) -> DiskCacheConfiguration {
        DiskCacheConfiguration(
            name: "tests", directory: folder.store, masterKeySource: .masterKey(TestKeys.primary), clock: clock,
            engine: engine)
    }

    @Test func anOpenThatSawAFileStoreBeforeTheMigrationCommittedOpensTheSQLiteStore() throws {
        // Given a file store, which an open looks at (its record says files) just before a migration commits
        try DiskCache<String, Data>(configuration: configuration(.files)).setValue(Data("kept".utf8), forKey: "k")
        let looked = EngineSelection.recordedEngine(in: StoreLayout(root: folder.store))
        #expect(looked == .files)
        #expect(try configuration(.automatic).migrateStoreToSQLite() == 1)

        // When the open goes on with what it saw
        let engine = try EngineSelection.openEngine(configuration(.automatic), recorded: looked)

        // Then it opened the store as it is now, the SQLite store, and reads the migrated entry
        #expect(engine is SQLiteEngine)
        let cache = DiskCache<String, Data>(configuration: configuration(.automatic), codec: .data, engine: engine)
        #expect(try cache.value(forKey: "k") == Data("kept".utf8))
    }

    @Test func anOpenThatAskedForFilesStillRefusesTheMigratedStore() throws {
        // Given a file store migrated after an open that asked for the file engine looked at it
        try DiskCache<String, Data>(configuration: configuration(.files)).setValue(Data("kept".utf8), forKey: "k")
        #expect(try configuration(.automatic).migrateStoreToSQLite() == 1)

        // When that open goes on, then the file engine it asked for refuses the SQLite store, naming the change
        let error = #expect(throws: CacheError.self) {
            try EngineSelection.openEngine(configuration(.files), recorded: .files)
        }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("moved to the SQLite engine by a migration") == true)
    }

    @Test func anInstanceUsingTheFileStoreWhenTheMigrationCommitsSaysToOpenTheStoreAgain() throws {
        // Given an instance that opened a file store (as `strata` does, with the engine the folder records)
        try DiskCache<String, Data>(configuration: configuration(.files)).setValue(Data("kept".utf8), forKey: "k")
        let files = try DiskCache<String, Data>(configuration: configuration(.automatic))
        #expect(files.engine is FileEngine)

        // When a migration moves the store, then the instance's next read fails with a message that says what
        // happened and what to do, not that a format it reads is one it cannot read
        #expect(try configuration(.automatic).migrateStoreToSQLite() == 1)
        let error = #expect(throws: CacheError.self) { try files.value(forKey: "k") }
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("open the store again") == true)
        #expect(error?.message.contains("this build reads") == false)
        // and opening it again reads the entry from the SQLite store.
        let reopened = try DiskCache<String, Data>(configuration: configuration(.automatic))
        #expect(try reopened.value(forKey: "k") == Data("kept".utf8))
    }
}

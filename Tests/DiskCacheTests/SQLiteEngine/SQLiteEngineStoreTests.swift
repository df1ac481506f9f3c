import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// The SQLite store as a whole: its engine recorded in the folder, several instances on one store, a wrong
/// key, and a database that is not one.
@Suite struct SQLiteEngineStoreTests {
    let folder = TemporaryFolder()

    func configuration(_ engine: DiskCacheConfiguration.Engine, key: Data = TestKeys.primary) -> DiskCacheConfiguration
    {
        DiskCacheConfiguration(
            name: "tests", directory: folder.store, masterKeySource: .masterKey(key), clock: ManualClock(),
            engine: engine)
    }

    @Test func aStoreOpensWithTheEngineItWasCreatedWith() throws {
        do {
            let cache = try DiskCache<String, Data>(configuration: configuration(.sqlite))
            try cache.setValue(Data("v".utf8), forKey: "k")
        }
        let automatic = try DiskCache<String, Data>(configuration: configuration(.automatic))
        #expect(automatic.engine is SQLiteEngine)
        #expect(try automatic.value(forKey: "k") == Data("v".utf8))

        let error = #expect(throws: CacheError.self) {
            try DiskCache<String, Data>(configuration: configuration(.files))
        }
        #expect(error?.code == .unsupportedFormat)
        // A build that knows only the file engine reads store.check as a newer format, never as an empty store.
        let older = #expect(throws: CacheError.self) { try FileEngine(configuration: configuration(.files)) }
        #expect(older?.code == .unsupportedFormat)
        #expect(try automatic.value(forKey: "k") == Data("v".utf8))
    }

    @Test func aFileStoreKeepsItsEngineUnderAutomatic() throws {
        do {
            let cache = try DiskCache<String, Data>(configuration: configuration(.files))
            try cache.setValue(Data("v".utf8), forKey: "k")
        }
        let automatic = try DiskCache<String, Data>(configuration: configuration(.automatic))
        #expect(automatic.engine is FileEngine)
        #expect(try automatic.value(forKey: "k") == Data("v".utf8))
        // Written to under .automatic, it is still a file store: no database appeared beside it.
        try automatic.setValue(Data("w".utf8), forKey: "k2")
        #expect(try recordedVersion() == KeyCheckRecord.version)
        #expect(!FileManager.default.fileExists(atPath: folder.store.path + "/" + SQLiteEngine.databaseName))
        #expect(entryFileNames(inStore: folder.store).count == 2)
        let error = #expect(throws: CacheError.self) {
            try DiskCache<String, Data>(configuration: configuration(.sqlite))
        }
        #expect(error?.code == .unsupportedFormat)
    }

    @Test func aNewStoreUnderAutomaticIsASQLiteStore() throws {
        // Given an empty folder and the default engine option
        #expect(DiskCacheConfiguration(name: "tests").engine == .automatic)

        // When a store is created in it and written to
        let cache = try DiskCache<String, Data>(configuration: configuration(.automatic))
        try cache.setValue(Data("v".utf8), forKey: "k")

        // Then it is a SQLite store, recorded as one (store.check version 2), with no entry files
        #expect(cache.engine is SQLiteEngine)
        #expect(try recordedVersion() == KeyCheckRecord.sqliteVersion)
        #expect(FileManager.default.fileExists(atPath: folder.store.path + "/" + SQLiteEngine.databaseName))
        #expect(!FileManager.default.fileExists(atPath: folder.store.path + "/" + StoreLayout.entriesName))
        // and it opens as one again, by either option that allows it
        for engine in [Engine.automatic, .sqlite] {
            let reopened = try DiskCache<String, Data>(configuration: configuration(engine))
            #expect(reopened.engine is SQLiteEngine)
            #expect(try reopened.value(forKey: "k") == Data("v".utf8))
        }
    }

    /// The version byte of the folder's key-check record (Docs/DiskFormat.md): 1 for files, 2 for SQLite.
    private func recordedVersion() throws -> UInt8 {
        let record = try Data(contentsOf: folder.store.appendingPathComponent(StoreLayout.checkRecordName))
        return try #require(record.count > 4 ? record[record.startIndex + 4] : nil)
    }

    @Test(arguments: [Engine.automatic, .files, .sqlite])
    func anUnknownCheckRecordVersionNamesTheVersionsThisBuildReads(_ engine: Engine) throws {
        // Given a store whose store.check says version 3 (a newer build's)
        do {
            let cache = try DiskCache<String, Data>(configuration: configuration(.sqlite))
            try cache.setValue(Data("v".utf8), forKey: "k")
        }
        let check = URL(fileURLWithPath: folder.store.path + "/" + StoreLayout.checkRecordName)
        var record = try Data(contentsOf: check)
        record[4] = 3
        try record.write(to: check)

        // When it is opened with any engine option
        let error = #expect(throws: CacheError.self) {
            try DiskCache<String, Data>(configuration: configuration(engine))
        }

        // Then it is a newer format, and the message names both versions this build reads, not one of them
        #expect(error?.code == .unsupportedFormat)
        #expect(error?.message.contains("format version 3") == true)
        #expect(error?.message.contains("reads versions 1 (the file engine) and 2 (the SQLite engine)") == true)
        #expect(FileManager.default.fileExists(atPath: folder.store.path + "/" + SQLiteEngine.databaseName))
    }

    @Test func followingAReplacedDatabaseLeavesTheNewDatabasesWALAlone() throws {
        // Given an instance reading its store, whose folder is then deleted and made again by another instance
        // that has a committed write only in its WAL
        let clock = ManualClock()
        var old = configuration(.sqlite)
        old.clock = clock
        let first = try DiskCache<String, Data>(configuration: old)
        try first.setValue(Data("1".utf8), forKey: "k")
        #expect(try first.value(forKey: "k") == Data("1".utf8))
        try FileManager.default.removeItem(at: folder.store)
        let second = try DiskCache<String, Data>(configuration: configuration(.sqlite))
        try second.setValue(Data("2".utf8), forKey: "k")

        // When the first instance follows the path to the new database (closing its connections on the old one)
        clock.advance(by: 1)
        #expect(try first.value(forKey: "k") == Data("2".utf8))

        // Then the new database's WAL is still there, and a third instance reads what the second wrote
        #expect(FileManager.default.fileExists(atPath: folder.store.path + "/" + SQLiteEngine.databaseName + "-wal"))
        #expect(try DiskCache<String, Data>(configuration: configuration(.sqlite)).value(forKey: "k") == Data("2".utf8))
        #expect(try second.value(forKey: "k") == Data("2".utf8))
    }

    @Test func anotherMasterKeyIsRefusedAndDeletesNothing() throws {
        let cache = try DiskCache<String, Data>(configuration: configuration(.sqlite))
        try cache.setValue(Data("v".utf8), forKey: "k")

        let error = #expect(throws: CacheError.self) {
            try DiskCache<String, Data>(configuration: configuration(.sqlite, key: TestKeys.other))
        }

        #expect(error?.code == .wrongMasterKey)
        #expect(try cache.value(forKey: "k") == Data("v".utf8))
    }

    @Test func twoInstancesOnOneStoreSeeEachOthersWritesAndWipes() throws {
        let first = try DiskCache<String, Data>(configuration: configuration(.sqlite))
        let second = try DiskCache<String, Data>(configuration: configuration(.sqlite))

        try first.setValue(Data("1".utf8), forKey: "k")
        #expect(try second.value(forKey: "k") == Data("1".utf8))
        try second.removeAll()
        #expect(try first.value(forKey: "k") == nil)
        // The first instance still holds the old epoch: its next write must be readable by both.
        try first.setValue(Data("2".utf8), forKey: "k")
        #expect(try second.value(forKey: "k") == Data("2".utf8))
        #expect(try first.value(forKey: "k") == Data("2".utf8))
        #expect(first.count == 1 && second.count == 1)
    }

    @Test func aDatabaseThatIsNotOneIsQuarantinedAndTheStoreStartsEmpty() throws {
        do {
            let cache = try DiskCache<String, Data>(configuration: configuration(.sqlite))
            try cache.setValue(Data("v".utf8), forKey: "k")
        }
        let database = folder.store.path + "/" + SQLiteEngine.databaseName
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
        try Data(repeating: 0x41, count: 8_192).write(to: URL(fileURLWithPath: database))
        let events = EventRecorder()
        var damaged = configuration(.sqlite)
        damaged.observer = events.observer

        let cache = try DiskCache<String, Data>(configuration: damaged)

        #expect(try cache.value(forKey: "k") == nil)
        try cache.setValue(Data("again".utf8), forKey: "k")
        #expect(try cache.value(forKey: "k") == Data("again".utf8))
        #expect(events.count(of: .corruptEntryRemoved) == 1)
        let quarantined = try FileManager.default.contentsOfDirectory(atPath: folder.store.path + "/quarantine")
        #expect(quarantined.contains { $0.hasPrefix(SQLiteEngine.databaseName + "-") })
    }

    @Test func quarantineKeepsTheNewestDamagedDatabasesOnly() throws {
        let database = folder.store.path + "/" + SQLiteEngine.databaseName
        var reports = 0
        // Five times: a store with an entry, then its database overwritten, then opened again
        for round in 0..<5 {
            do {
                let cache = try DiskCache<String, Data>(configuration: configuration(.sqlite))
                try cache.setValue(Data("v\(round)".utf8), forKey: "k")
            }
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database + suffix) }
            try Data(repeating: 0x41, count: 8_192).write(to: URL(fileURLWithPath: database))
            let events = EventRecorder()
            var damaged = configuration(.sqlite)
            damaged.observer = events.observer
            _ = try DiskCache<String, Data>(configuration: damaged)
            reports += events.count(of: .corruptEntryRemoved)
        }
        // Every quarantine was reported, and quarantine/ holds the last three databases, not five
        #expect(reports == 5)
        let kept = try FileManager.default.contentsOfDirectory(atPath: folder.store.path + "/quarantine").filter {
            $0.hasPrefix(SQLiteEngine.databaseName + "-") && !$0.contains("-wal-") && !$0.contains("-shm-")
        }
        #expect(kept.count == SQLiteEngine.quarantinedDatabasesKept, "\(kept)")
    }

    @Test func listingShowsEachEntrysTagsAndARemovedTagEndsItsEntries() throws {
        let cache = try DiskCache<String, Data>(configuration: configuration(.sqlite))
        func set(_ value: String, _ key: String, tags: Set<String>) throws {
            try cache.setEntry(
                CacheEntry(value: Data(value.utf8), tags: tags), forKey: key, taggedAt: try cache.tagVersions(for: tags)
            )
        }
        try set("1", "a", tags: ["red", "blue"])
        try set("2", "b", tags: ["blue"])
        try cache.setValue(Data("3".utf8), forKey: "c")

        let listed = Dictionary(uniqueKeysWithValues: try cache.listEntries().map { ($0.key, $0.tags) })
        #expect(listed == ["a": ["red", "blue"], "b": ["blue"], "c": []])

        try cache.removeAll(taggedWith: "blue")
        #expect(try cache.value(forKey: "a") == nil)
        #expect(try cache.value(forKey: "b") == nil)
        #expect(try cache.value(forKey: "c") == Data("3".utf8))
        #expect(try cache.listEntries().map(\.key) == ["c"])
    }
}

import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// Found by trying to break the engine: columns edited to extremes, a file name pointing at another row's file,
/// an observer that writes back from inside a write, two migrations at once.
@Suite struct SQLiteEngineHostileEditTests {
    let folder = TemporaryFolder()

    @Test(arguments: [
        "UPDATE entry SET accessed = -9223372036854775808",
        "UPDATE entry SET size = -9223372036854775808",
        "UPDATE entry SET size = 9223372036854775807",
        "UPDATE totals SET count = -9223372036854775808, bytes = -9223372036854775808",
    ])
    func extremeValuesInTheColumnsAreMissesNeverATrap(_ edit: String) throws {
        let cache = try makeSQLiteCache(folder, byteLimit: 1 << 20)
        try cache.setValue(Data("a".utf8), forKey: "a")
        try cache.setValue(Data("b".utf8), forKey: "b")
        try StoreDatabase(folder).execute(edit)

        // Every call returns (a value, a miss or an error); none traps on arithmetic.
        let read = try cache.value(forKey: "a")
        #expect(read == nil || read == Data("a".utf8))
        try? cache.removeEntry(forKey: "b")
        try cache.setValue(Data("c".utf8), forKey: "c")
        _ = try cache.verify()
        _ = try cache.trim(toBytes: 10)
        try cache.removeAll()
        #expect(cache.count == 0)
    }

    @Test(arguments: ["UPDATE totals SET bytes = 1e12", "UPDATE totals SET count = 1000000000"])
    func totalsEditedUpwardsAreRecountedBeforeATrimEvictsEverything(_ edit: String) throws {
        // Given a store well within its limits, whose stored totals are then edited upwards
        let events = EventRecorder()
        let cache = try DiskCache<String, Data>(
            configuration: DiskCacheConfiguration(
                name: "tests", directory: folder.store, byteLimit: 1 << 20, countLimit: 100,
                masterKeySource: .masterKey(TestKeys.primary), clock: ManualClock(), observer: events.observer,
                engine: .sqlite))
        for index in 0..<10 { try cache.setValue(Data(count: 1_000), forKey: "k\(index)") }
        try StoreDatabase(folder).execute(edit)

        // When a write runs the trim the edited totals call for
        try cache.setValue(Data(count: 1_000), forKey: "new")

        // Then the totals are recounted from the rows (reported as repaired) and no entry is evicted
        #expect(cache.count == 11)
        for index in 0..<10 { #expect(try cache.value(forKey: "k\(index)") == Data(count: 1_000)) }
        #expect(cache.statistics.evictions == 0)
        #expect(events.count(of: .maintenanceFailed) == 1)
    }

    static let epochDamage = [
        "DELETE FROM meta WHERE name = 'epoch'",
        "UPDATE meta SET value = x'0102' WHERE name = 'epoch'",
        "UPDATE meta SET value = 'not a salt, but text of some length' WHERE name = 'epoch'",
        "UPDATE meta SET value = NULL WHERE name = 'epoch'",
        "UPDATE meta SET value = 42 WHERE name = 'epoch'",
    ]

    @Test(arguments: epochDamage)
    func aDamagedEpochIsAWipeAnOpenStoreRecoversFrom(_ edit: String) throws {
        // Given an open store with an entry, whose epoch row is then damaged from outside
        let events = EventRecorder()
        let cache = try makeSQLiteCache(folder, observer: events.observer)
        try cache.setValue(Data("a".utf8), forKey: "a")
        try StoreDatabase(folder).execute(edit)

        // When it is read, then written
        #expect(try cache.value(forKey: "a") == nil)
        try cache.setValue(Data("b".utf8), forKey: "b")

        // Then the earlier entry stays a miss, the write started a fresh epoch that every instance reads, and
        // the repair was reported
        #expect(try cache.value(forKey: "b") == Data("b".utf8))
        let reopened = try makeSQLiteCache(folder)
        #expect(try reopened.value(forKey: "b") == Data("b".utf8))
        #expect(try reopened.value(forKey: "a") == nil)
        let stored = try StoreDatabase(folder).integers("SELECT length(value) FROM meta WHERE name = 'epoch'")
        #expect(stored == [Int64(KeyCheckRecord.saltSize)])
        #expect(events.count(of: .corruptEntryRemoved) >= 1)
    }

    /// Each damage of the epoch row, and a deleted epoch with an index gone too: an open that finds the schema
    /// incomplete runs the schema statements again, as for a new database, and must still not give the existing
    /// one a first epoch quietly.
    static let closedStoreEpochDamage =
        epochDamage.map { [$0] } + [
            ["DELETE FROM meta WHERE name = 'epoch'", "DROP INDEX entry_accessed"]
        ]

    @Test(arguments: closedStoreEpochDamage)
    func aStoreWhoseEpochIsDamagedOpensAsAfterAWipe(_ edits: [String]) throws {
        // Given a closed store with an entry, whose epoch row is then damaged
        do {
            let cache = try makeSQLiteCache(folder)
            try cache.setValue(Data("a".utf8), forKey: "a")
        }
        let database = try StoreDatabase(folder)
        for edit in edits { try database.execute(edit) }

        // When it is opened
        let events = EventRecorder()
        let cache = try makeSQLiteCache(folder, observer: events.observer)

        // Then it opens with a fresh epoch (reported), the earlier entry is a miss, and it takes writes
        #expect(events.count(of: .corruptEntryRemoved) == 1)
        #expect(try cache.value(forKey: "a") == nil)
        try cache.setValue(Data("b".utf8), forKey: "b")
        #expect(try makeSQLiteCache(folder).value(forKey: "b") == Data("b".utf8))
    }

    @Test func aFileColumnNamingAnotherRowsFileNeverDeletesIt() throws {
        let cache = try makeSQLiteCache(folder)
        let large = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0) })
        try cache.setValue(Data("small".utf8), forKey: "a")
        try cache.setValue(large, forKey: "big")
        let database = try StoreDatabase(folder)
        try database.execute(
            "UPDATE entry SET file = (SELECT file FROM entry WHERE file IS NOT NULL) WHERE value IS NOT NULL")

        #expect(try cache.value(forKey: "a") == nil)
        try cache.removeEntry(forKey: "a")
        #expect(try cache.value(forKey: "big") == large)
    }

    @Test func anObserverThatWritesWhenATagCounterIsDamagedDoesNotDeadlockTheStore() throws {
        let written = Locked(false)
        let box = Locked<DiskCache<String, Data>?>(nil)
        let cache = try DiskCache<String, Data>(
            configuration: DiskCacheConfiguration(
                name: "tests", directory: folder.store, masterKeySource: .masterKey(TestKeys.primary),
                clock: ManualClock(),
                observer: { event in
                    guard event.kind == .corruptEntryKept, let cache = box.withLock({ $0 }) else { return }
                    try? cache.setValue(Data("from the observer".utf8), forKey: "o")
                    written.withLock { $0 = true }
                }, engine: .sqlite))
        box.withLock { $0 = cache }
        defer { box.withLock { $0 = nil } }
        try cache.setEntry(
            CacheEntry(value: Data("v".utf8), tags: ["t"]), forKey: "k", taggedAt: try cache.tagVersions(for: ["t"]))
        try StoreDatabase(folder).execute("UPDATE tag SET counter = zeroblob(40)")

        try cache.removeAll(taggedWith: "t")

        #expect(written.withLock { $0 })
        #expect(try cache.value(forKey: "o") == Data("from the observer".utf8))
    }

    @Test func twoMigrationsAtOnceLoseNothing() throws {
        do {
            let files = try DiskCache<String, Data>(
                configuration: DiskCacheConfiguration(
                    name: "tests", directory: folder.store, masterKeySource: .masterKey(TestKeys.primary),
                    engine: .files))
            for index in 0..<200 { try files.setValue(Data("v\(index)".utf8), forKey: "k\(index)") }
        }
        let configuration = DiskCacheConfiguration(
            name: "tests", directory: folder.store, masterKeySource: .masterKey(TestKeys.primary))

        let results = Locked<[Result<Int, any Error>]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            let result = Result { try configuration.migrateStoreToSQLite() }
            results.withLock { $0.append(result) }
        }
        let moved = try results.withLock { $0 }.map { try $0.get() }.sorted()

        #expect(moved == [0, 200])
        let cache = try DiskCache<String, Data>(configuration: configuration)
        #expect(cache.count == 200)
        for index in 0..<200 { #expect(try cache.value(forKey: "k\(index)") == Data("v\(index)".utf8)) }
    }
}

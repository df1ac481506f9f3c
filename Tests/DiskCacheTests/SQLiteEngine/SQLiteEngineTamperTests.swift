import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// A SQLite store edited from outside: each row's seal binds its name, epoch, expiry and (for a large value)
/// its file, so an edit is a miss counted as corrupt, never a wrong value (issue 24, item 3).
@Suite struct SQLiteEngineTamperTests {
    let folder = TemporaryFolder()

    @Test func swappingTwoRowsValuesMakesBothMissesNeverTheOtherValue() throws {
        let cache = try makeSQLiteCache(folder)
        try cache.setValue(Data("alpha".utf8), forKey: "a")
        try cache.setValue(Data("bravo".utf8), forKey: "b")
        let database = try StoreDatabase(folder)

        // Two rows of equal size (same key and value lengths): each takes the other's sealed value.
        try database.execute("CREATE TEMP TABLE copied AS SELECT id, value FROM entry")
        try database.execute("UPDATE entry SET value = (SELECT value FROM copied WHERE copied.id != entry.id)")

        #expect(try cache.value(forKey: "a") == nil)
        #expect(try cache.value(forKey: "b") == nil)
        #expect(cache.statistics.corruptEntriesRemoved == 2)
        #expect(try database.integers("SELECT count(*) FROM entry") == [0])
    }

    @Test func editingAnExpiryOrASizeInSQLMakesTheEntryAMiss() throws {
        let clock = ManualClock()
        let cache = try makeSQLiteCache(folder, clock: clock)
        try cache.setValue(Data("expiring".utf8), forKey: "e", expiry: .seconds(60))
        try cache.setValue(Data("sized".utf8), forKey: "s")
        let database = try StoreDatabase(folder)

        try database.execute("UPDATE entry SET removable = removable + 86400000 WHERE removable IS NOT NULL")
        try database.execute("UPDATE entry SET size = size + 1 WHERE removable IS NULL")

        #expect(try cache.value(forKey: "e") == nil)
        #expect(try cache.value(forKey: "s") == nil)
        #expect(cache.statistics.corruptEntriesRemoved == 2)
    }

    @Test func theTotalsFollowEveryRowAndVerifyRepairsDrift() throws {
        let cache = try makeSQLiteCache(folder)
        for index in 0..<5 { try cache.setValue(Data(count: 100 * (index + 1)), forKey: "k\(index)") }
        try cache.removeEntry(forKey: "k0")
        try cache.setValue(Data(count: 10), forKey: "k1")
        let database = try StoreDatabase(folder)
        let actual =
            try database.integers("SELECT count(*) FROM entry")
            + database.integers(
                "SELECT sum(size) FROM entry")
        #expect(
            try database.integers("SELECT count FROM totals") + database.integers("SELECT bytes FROM totals") == actual)

        try database.execute("UPDATE totals SET count = 99, bytes = 7")
        _ = try cache.verify()

        #expect(
            try database.integers("SELECT count FROM totals") + database.integers("SELECT bytes FROM totals") == actual)
        #expect(cache.count == 4)
    }

    @Test func aHitBeginsNoWriteTransaction() throws {
        let clock = ManualClock()
        let cache = try makeSQLiteCache(folder, clock: clock)
        try cache.setValue(Data("v".utf8), forKey: "k")
        let before = cache.sqliteEngine.writeTransactionCount

        for _ in 0..<20 {
            clock.advance(by: 5)
            #expect(try cache.value(forKey: "k") == Data("v".utf8))
        }

        #expect(cache.sqliteEngine.writeTransactionCount == before)
        // The accesses were kept and go out with the next write (one transaction, not twenty).
        try cache.setValue(Data("w".utf8), forKey: "other")
        #expect(cache.sqliteEngine.writeTransactionCount == before + 1)
        let database = try StoreDatabase(folder)
        let accessed = try database.integers("SELECT accessed FROM entry ORDER BY accessed")
        #expect(accessed.count == 2)
        #expect(accessed[0] >= SQLiteEngine.milliseconds(clock.now) - 5_000)
    }
}

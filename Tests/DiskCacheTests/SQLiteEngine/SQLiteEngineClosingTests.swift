import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// What opening and closing a SQLite store costs a short-lived process (issue 28: `strata get`): no schema
/// write at open, one commit for the counters and access times, no checkpoint at close below the threshold,
/// and the WAL emptied at close above it.
@Suite struct SQLiteEngineClosingTests {
    let folder = TemporaryFolder()

    var walPath: String { folder.store.path + "/" + SQLiteEngine.databaseName + "-wal" }

    func walSize() -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: walPath))?[.size] as? NSNumber)?.intValue ?? -1
    }

    @Test func openingAnExistingStoreBeginsNoWriteTransaction() throws {
        do { try makeSQLiteCache(folder).setValue(Data("v".utf8), forKey: "k") }

        let cache = try makeSQLiteCache(folder)

        #expect(cache.sqliteEngine.writeTransactionCount == 0)
        #expect(try cache.value(forKey: "k") == Data("v".utf8))
        #expect(cache.sqliteEngine.writeTransactionCount == 0)
    }

    @Test func aTableDeletedFromOutsideIsMadeAgainAtOpen() throws {
        do { try makeSQLiteCache(folder).setValue(Data("v".utf8), forKey: "k") }
        do { try StoreDatabase(folder).execute("DROP TABLE tag") }

        let cache = try makeSQLiteCache(folder)

        #expect(cache.sqliteEngine.writeTransactionCount == 0)  // counted by write(), not by the open's own
        let tables = try StoreDatabase(folder).connection.withStatement(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'tag'"
        ) { try $0.step() ? $0.int64(at: 0) : 0 }
        #expect(tables == 1)
        #expect(try cache.value(forKey: "k") == Data("v".utf8))
    }

    @Test func aHitsCounterAndItsAccessTimeAreWrittenInOneTransaction() throws {
        let clock = ManualClock()
        do { try makeSQLiteCache(folder, clock: clock).setValue(Data("v".utf8), forKey: "k") }
        clock.advance(by: 5)
        let cache = try makeSQLiteCache(folder, clock: clock)
        #expect(try cache.value(forKey: "k") == Data("v".utf8))
        #expect(!cache.sqliteEngine.state.withLock { $0.recency.isEmpty })

        try cache.flushStatistics()

        #expect(cache.sqliteEngine.writeTransactionCount == 1)
        #expect(cache.sqliteEngine.state.withLock { $0.recency.isEmpty })
        let accessed = try StoreDatabase(folder).connection.withStatement("SELECT accessed FROM entry") {
            try $0.step() ? $0.int64(at: 0) : 0
        }
        #expect(accessed == SQLiteEngine.milliseconds(clock.now))
        #expect(try makeSQLiteCache(folder, clock: clock).statistics.hits == 1)
    }

    #if os(Linux)
    @Test func closingBelowTheThresholdLeavesTheWALForTheNextInstance() throws {
        do {
            let cache = try makeSQLiteCache(folder)
            try cache.setValue(Data("v".utf8), forKey: "k")
            #expect(try cache.value(forKey: "k") == Data("v".utf8))
        }

        // Not copied into the database at close: the frames are still in the WAL, and a new instance reads them.
        #expect(walSize() > 0)
        let cache = try makeSQLiteCache(folder)
        #expect(try cache.value(forKey: "k") == Data("v".utf8))
        #expect(cache.statistics.hits == 2)  // the first instance's hit, read from the WAL, and this one's
    }
    #endif

    @Test func closingPastTheThresholdEmptiesTheWAL() throws {
        do {
            let cache = try makeSQLiteCache(folder)
            for index in 0..<SQLiteEngine.closingCheckpointFrames {
                try cache.setValue(Data("v\(index)".utf8), forKey: "k\(index)")
            }
            #expect(walSize() > 0)
        }

        #expect(walSize() == 0)
        let cache = try makeSQLiteCache(folder)
        for index in 0..<SQLiteEngine.closingCheckpointFrames {
            #expect(try cache.value(forKey: "k\(index)") == Data("v\(index)".utf8))
        }
    }
}

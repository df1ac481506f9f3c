import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// Buffered access times go out in transactions of a bounded size, so one flush never puts more than a
/// small transaction into the WAL (issue 24: the WAL stays within its limit plus one transaction).
@Suite struct SQLiteEngineRecencyTests {
    let folder = TemporaryFolder()

    @Test func bufferedAccessesGoOutABatchPerWriteTransaction() throws {
        // Given 300 entries, each read a few seconds after it was written
        let clock = ManualClock()
        let cache = try makeSQLiteCache(folder, clock: clock)
        let keys = (0..<300).map { "k\($0)" }
        for key in keys { try cache.setValue(Data(key.utf8), forKey: key) }
        clock.advance(by: 5)
        for key in keys { #expect(try cache.value(forKey: key) == Data(key.utf8)) }
        let read = SQLiteEngine.milliseconds(clock.now)
        let database = try StoreDatabase(folder)
        let stampedNow = "SELECT count(*) FROM entry WHERE accessed = \(read)"

        // When one write goes out, then the buffer is flushed
        try cache.setValue(Data("w".utf8), forKey: "other")

        // Then the write carried one batch of the accesses (the new row is stamped with its write)
        let batch = SQLiteEngine.recencyWriteBatch
        #expect(try database.integers(stampedNow) == [Int64(batch + 1)])

        // and a flush writes the other 172 in batches, one transaction each
        let before = cache.sqliteEngine.writeTransactionCount
        try cache.sqliteEngine.flushRecency()
        let left = keys.count - batch
        #expect(cache.sqliteEngine.writeTransactionCount == before + (left + batch - 1) / batch)
        #expect(try database.integers(stampedNow) == [Int64(keys.count + 1)])
    }
}

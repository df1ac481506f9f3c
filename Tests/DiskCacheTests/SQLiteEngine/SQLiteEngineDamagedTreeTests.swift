import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// A database whose `entry` b-tree is damaged so that its rowids are out of order (found by the reliability
/// suite's damaged-database fuzzer): a sweep pages through the rows by rowid and must still end.
@Suite struct SQLiteEngineDamagedTreeTests {
    let folder = TemporaryFolder()

    @Test func verifyEndsWhenTheRowidsOfTheEntryTreeAreOutOfOrder() throws {
        do {
            let cache = try makeSQLiteCache(folder)
            for key in ["a", "b", "c"] { try cache.setValue(Data(key.utf8), forKey: key) }
        }
        let path = folder.store.path + "/" + SQLiteEngine.databaseName
        let (root, pageSize) = try {
            let database = try StoreDatabase(folder)
            try database.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return (
                try database.integers("SELECT rootpage FROM sqlite_master WHERE name = 'entry'")[0],
                try database.integers("PRAGMA page_size")[0]
            )
        }()
        // The three rows sit in one leaf page (type 13), cells in rowid order 1, 2, 3: make the last one 0.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let page = Int((root - 1) * pageSize)
        try #require(bytes[page] == 13 && Int(bytes[page + 3]) << 8 | Int(bytes[page + 4]) == 3)
        var cell = page + (Int(bytes[page + 12]) << 8 | Int(bytes[page + 13]))
        while bytes[cell] & 0x80 != 0 { cell += 1 }  // the payload length, a varint
        try #require(bytes[cell + 1] == 3)
        bytes[cell + 1] = 0
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let cache = try makeSQLiteCache(folder)
        // On another thread: before the fix the sweep read the same page of rows forever.
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? cache.verify()
            finished.signal()
        }
        #expect(finished.wait(timeout: .now() + 60) == .success, "verify() never returned")
    }
}

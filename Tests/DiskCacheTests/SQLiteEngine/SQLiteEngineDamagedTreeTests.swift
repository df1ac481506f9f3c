import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// A database whose `entry` b-tree is damaged so that its rowids are out of order (found by the reliability
/// suite's damaged-database fuzzer): a sweep or a wipe pages through the rows by rowid and must still end.
@Suite struct SQLiteEngineDamagedTreeTests {
    let folder = TemporaryFolder()

    @Test func verifyEndsWhenTheRowidsOfTheEntryTreeAreOutOfOrder() throws {
        try storeWithDamagedRowid(cell: 2, from: 3, to: 0)
        let cache = try makeSQLiteCache(folder)
        // Before the fix the sweep read the same page of rows forever.
        #expect(ends { _ = try? cache.verify() }, "verify() never returned")
    }

    @Test func removeAllEndsWhenARowOfTheEntryTreeCannotBeDeleted() throws {
        // Rowids 5, 2, 3 in one leaf: a lookup of 5 (and of 3 once 2 is gone) misses it, so `DELETE ... WHERE
        // id = ?1` deletes nothing while every scan of the table still returns the row. Before the fix the wipe
        // scanned from the start again after each batch, counted the rows it asked to delete as deleted, and
        // here stopped only when SQLite reported the damage on the second pass, the totals set to 0 with two
        // rows left.
        try storeWithDamagedRowid(cell: 0, from: 1, to: 5)
        let cache = try makeSQLiteCache(folder)
        #expect(ends { _ = try? cache.removeAll() }, "removeAll() never returned")
        // The rows left are of the old key epoch: unreadable (a read of one may also fail as corrupt).
        for key in ["a", "b", "c"] {
            #expect((try? cache.value(forKey: key)) ?? nil == nil, "\(key) outlived the wipe")
        }
        // The stored count moved by the rows actually deleted (one of three), not by the rows the scan returned.
        let database = try StoreDatabase(folder)
        let rows = try database.integers("SELECT count(*) FROM entry")[0]
        #expect(rows == 2)
        #expect(try database.integers("SELECT count FROM totals WHERE id = 1") == [rows])
    }

    /// Stores keys a, b and c (rowids 1, 2 and 3, one leaf page) and rewrites the rowid of the leaf's cell
    /// number `cell` (in rowid order) from `from` to `to`, both under 128 (a one-byte varint).
    private func storeWithDamagedRowid(cell index: Int, from: UInt8, to: UInt8) throws {
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
        // A table leaf (type 13) holding three cells; its cell pointers follow the 8-byte header.
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let page = Int((root - 1) * pageSize)
        try #require(bytes[page] == 13 && Int(bytes[page + 3]) << 8 | Int(bytes[page + 4]) == 3)
        let pointer = page + 8 + 2 * index
        var cell = page + (Int(bytes[pointer]) << 8 | Int(bytes[pointer + 1]))
        while bytes[cell] & 0x80 != 0 { cell += 1 }  // the payload length, a varint
        try #require(bytes[cell + 1] == from)
        bytes[cell + 1] = to
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Runs `body` on another thread and waits up to a minute for it: a loop that never ends fails the test
    /// rather than hanging the suite.
    private func ends(_ body: @escaping @Sendable () -> Void) -> Bool {
        let finished = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            body()
            finished.signal()
        }
        return finished.wait(timeout: .now() + 60) == .success
    }
}

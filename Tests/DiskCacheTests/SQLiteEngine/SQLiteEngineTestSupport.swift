import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport

@testable import DiskCache

/// Opens a `DiskCache<String, Data>` on the SQLite engine in `folder`'s store folder.
func makeSQLiteCache(
    _ folder: TemporaryFolder, byteLimit: Int? = nil, clock: any CacheClock = ManualClock(),
    key: Data = TestKeys.primary, observer: CacheObserver? = nil
) throws -> DiskCache<String, Data> {
    try DiskCache(
        configuration: DiskCacheConfiguration(
            name: "tests", directory: folder.store, byteLimit: byteLimit, masterKeySource: .masterKey(key),
            clock: clock, observer: observer, engine: .sqlite))
}

extension DiskCache {
    /// The SQLite engine under this cache; stops the test when it runs on another engine.
    var sqliteEngine: SQLiteEngine {
        guard let engine = engine as? SQLiteEngine else {
            preconditionFailure("this DiskCache runs on \(type(of: engine)), not on the SQLite engine")
        }
        return engine
    }
}

/// Runs SQL against a SQLite store's database from outside the engine, as another program (or an attacker
/// with write access to the folder) would.
struct StoreDatabase {
    let connection: SQLiteConnection

    init(_ folder: TemporaryFolder) throws {
        connection = try SQLiteConnection(path: folder.store.path + "/" + SQLiteEngine.databaseName)
    }

    func execute(_ sql: String) throws {
        try connection.writeTransaction { try connection.execute(sql) }
    }

    /// The integers of column 0 of every row `sql` returns.
    func integers(_ sql: String) throws -> [Int64] {
        try connection.withStatement(sql) { statement in
            var values: [Int64] = []
            while try statement.step() { values.append(statement.int64(at: 0)) }
            return values
        }
    }

    /// The texts of column 0 of every row `sql` returns (`NULL` as "").
    func texts(_ sql: String) throws -> [String] {
        try connection.withStatement(sql) { statement in
            var values: [String] = []
            while try statement.step() { values.append(try statement.text(at: 0) ?? "") }
            return values
        }
    }
}

import Foundation
import StrataTestSupport

@testable import DiskCache

extension TemporaryFolder {
    /// The database file the SQLite layer's tests use inside this temporary folder.
    var database: String { path("store.sqlite") }
}

/// Opens a connection on `folder`'s database with the layer's defaults (or `options`) and a table
/// `item(id INTEGER PRIMARY KEY, number INTEGER, real REAL, text TEXT, value BLOB)`.
func makeConnection(
    _ folder: TemporaryFolder, options: SQLiteConnection.Options = .init(), createTable: Bool = true
) throws -> SQLiteConnection {
    let connection = try SQLiteConnection(path: folder.database, options: options)
    if createTable {
        try connection.execute(
            "CREATE TABLE IF NOT EXISTS item(id INTEGER PRIMARY KEY, number INTEGER, real REAL, text TEXT, value BLOB)"
        )
    }
    return connection
}

/// Inserts one row of `item` with `id` and a blob value, in its own write transaction.
func insertItem(_ connection: SQLiteConnection, id: Int64, value: [UInt8]) throws {
    try connection.writeTransaction {
        try connection.withStatement("INSERT OR REPLACE INTO item(id, value) VALUES (?1, ?2)") { statement in
            try statement.bind(id, at: 1)
            try statement.bind(value, at: 2)
            _ = try statement.step()
        }
    }
}

/// The number of `item` rows.
func itemCount(_ connection: SQLiteConnection) throws -> Int64 {
    try connection.withStatement("SELECT count(*) FROM item") { statement in
        _ = try statement.step()
        return statement.int64(at: 0)
    }
}

/// Inserts a row of `item` with only its id (no transaction of its own).
func insertRow(_ connection: SQLiteConnection, id: Int64) throws {
    try connection.withStatement("INSERT INTO item(id) VALUES (?1)") { statement in
        try statement.bind(id, at: 1)
        _ = try statement.step()
    }
}

/// The size of the file at `path` in bytes, or -1 when there is none.
func fileSize(_ path: String) -> Int {
    var info = stat()
    return lstat(path, &info) == 0 ? Int(info.st_size) : -1
}

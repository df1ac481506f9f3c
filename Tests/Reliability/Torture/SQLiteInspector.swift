import Foundation

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// Raw access to a SQLite store's database with the system SQLite, beside the engine: what the SQLite
/// scenarios check after a crash or tampering (`PRAGMA integrity_check`, the stored totals against the rows,
/// large-value files against the rows that name them), and the edits the tampering scenario makes.
///
/// Not thread-safe: one scenario thread uses it, and closes it before the store is opened again.
final class SQLiteInspector {
    private var handle: OpaquePointer?

    /// Opens `store.sqlite` in `store`, read-only unless `writable`.
    init(store: URL, writable: Bool = false) throws {
        let path = store.appendingPathComponent("store.sqlite").path
        let flags = writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY
        guard sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            sqlite3_close(handle)
            throw HarnessError("cannot open \(path): \(message)")
        }
        sqlite3_busy_timeout(handle, 5_000)
    }

    deinit { sqlite3_close(handle) }

    /// The rows of a query, each column as an optional `Data` (text and blobs) or its integer as text.
    func query(_ sql: String, _ arguments: [Any] = []) throws -> [[Data?]] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else { throw failure(sql) }
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            switch argument {
            case let value as Int64: sqlite3_bind_int64(statement, position, value)
            case let value as Int: sqlite3_bind_int64(statement, position, Int64(value))
            case let value as String: sqlite3_bind_text(statement, position, value, -1, transient)
            case let value as Data:
                _ = value.withUnsafeBytes {
                    sqlite3_bind_blob(statement, position, $0.baseAddress, Int32($0.count), transient)
                }
            default: sqlite3_bind_null(statement, position)
            }
        }
        var rows: [[Data?]] = []
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_DONE { return rows }
            guard status == SQLITE_ROW else { throw failure(sql) }
            rows.append(
                (0..<sqlite3_column_count(statement)).map { column -> Data? in
                    switch sqlite3_column_type(statement, column) {
                    case SQLITE_NULL: return nil
                    case SQLITE_INTEGER: return Data(String(sqlite3_column_int64(statement, column)).utf8)
                    default:
                        let count = Int(sqlite3_column_bytes(statement, column))
                        guard let bytes = sqlite3_column_blob(statement, column) else { return Data() }
                        return Data(bytes: bytes, count: count)
                    }
                })
        }
    }

    /// Runs a statement that returns no rows.
    func execute(_ sql: String, _ arguments: [Any] = []) throws { _ = try query(sql, arguments) }

    /// The integer in the first column of the first row.
    func integer(_ sql: String) throws -> Int64 {
        guard let cell = try query(sql).first?.first, let cell, let value = Int64(String(decoding: cell, as: UTF8.self))
        else { return 0 }
        return value
    }

    /// `PRAGMA integrity_check`'s answer, joined: `ok` for a sound database.
    func integrityCheck() throws -> String {
        try query("PRAGMA integrity_check").compactMap { $0.first ?? nil }.map { String(decoding: $0, as: UTF8.self) }
            .joined(separator: "; ")
    }

    private func failure(_ sql: String) -> HarnessError {
        HarnessError("\(sql): \(String(cString: sqlite3_errmsg(handle)))")
    }
}

/// What a SQLite store holds on disk, read beside the engine.
struct SQLiteStoreAudit {
    var integrity = ""
    var storedCount: Int64 = 0
    var storedBytes: Int64 = 0
    var rowCount: Int64 = 0
    var rowBytes: Int64 = 0
    /// Rows whose large-value file is missing or of another size than the row records.
    var danglingRows = 0
    /// Files in `large/` that no row names.
    var orphanFiles = 0
    var largeFiles = 0
    /// The database holds no schema yet (its creator was killed before the schema committed).
    var emptyDatabase = false
    /// The database's creator was killed inside its first write, before the switch to WAL committed, and left
    /// SQLite's rollback journal, which the audit rolled back (see ``audit(_:)``).
    var rolledBackCreation = false

    /// The problems an audit after a crash must not show.
    var problems: [String] {
        var found: [String] = []
        if integrity != "ok" { found.append("integrity_check: \(integrity)") }
        if (storedCount, storedBytes) != (rowCount, rowBytes) {
            found.append("totals \(storedCount) entries / \(storedBytes) B, rows \(rowCount) / \(rowBytes) B")
        }
        if danglingRows > 0 { found.append("\(danglingRows) rows name a missing or resized large-value file") }
        return found
    }

    /// Audits the store in `store`; `nil` when it has no database yet (a file store, or nothing written).
    static func audit(_ store: URL) throws -> SQLiteStoreAudit? {
        guard FileManager.default.fileExists(atPath: store.appendingPathComponent("store.sqlite").path) else {
            return nil
        }
        var audit = SQLiteStoreAudit()
        // The engine's databases use a rollback journal only for the first write of a new database, before its
        // switch to WAL commits; a creator killed inside it leaves a hot journal, which a read-only connection
        // cannot roll back (SQLITE_READONLY_ROLLBACK) and the next opener, the engine, rolls back read-write. So
        // does the audit, once, before it looks: it then sees what the engine will see.
        if FileManager.default.fileExists(atPath: store.appendingPathComponent("store.sqlite-journal").path) {
            _ = try SQLiteInspector(store: store, writable: true).integer("SELECT count(*) FROM sqlite_master")
            audit.rolledBackCreation = true
        }
        let database = try SQLiteInspector(store: store)
        audit.integrity = try database.integrityCheck()
        // A database created but killed before its schema committed is an empty one, not a damaged one.
        guard try database.integer("SELECT count(*) FROM sqlite_master WHERE name = 'totals'") == 1 else {
            audit.emptyDatabase = true
            return audit
        }
        audit.storedCount = try database.integer("SELECT count FROM totals WHERE id = 1")
        audit.storedBytes = try database.integer("SELECT bytes FROM totals WHERE id = 1")
        audit.rowCount = try database.integer("SELECT count(*) FROM entry")
        audit.rowBytes = try database.integer("SELECT coalesce(sum(size), 0) FROM entry")
        let files = Store.files(under: store.appendingPathComponent("large"))
        audit.largeFiles = files.count
        var named = Set<String>()
        for row in try database.query("SELECT file, size FROM entry WHERE file IS NOT NULL") {
            guard let file = row[0], let size = row[1].flatMap({ Int(String(decoding: $0, as: UTF8.self)) }) else {
                continue
            }
            let name = String(decoding: file, as: UTF8.self)
            named.insert(name)
            if files[name] != size { audit.danglingRows += 1 }
        }
        audit.orphanFiles = files.keys.filter { !named.contains($0) }.count
        return audit
    }

    /// Dates every large-value file `seconds` into the past, so the next sweep treats a file no row names
    /// as an orphan at once (the sweep spares young files that a live writer may be about to commit; the
    /// writer here is dead).
    static func ageLargeFiles(_ store: URL, by seconds: TimeInterval) {
        let folder = store.appendingPathComponent("large")
        let past = Date().addingTimeInterval(-seconds)
        for name in Store.files(under: folder).keys {
            try? FileManager.default.setAttributes(
                [.modificationDate: past], ofItemAtPath: folder.appendingPathComponent(name).path)
        }
    }
}

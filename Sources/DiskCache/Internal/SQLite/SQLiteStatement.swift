#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// A prepared statement of one ``SQLiteConnection``: typed parameter binding, stepping and typed column
/// reading.
///
/// Only ``SQLiteConnection/withStatement(_:_:)`` hands one out, for the length of its closure; when the
/// closure returns the statement is reset and its bindings cleared, so no bound pointer outlives the
/// closure and the next user starts clean.
///
/// Parameters are numbered from 1 (SQLite's `?1`, `?2`…); columns from 0.
///
/// Blobs: ``bind(borrowing:at:)`` binds bytes without copying them (`SQLITE_STATIC`); SQLite reads them
/// during ``step()`` and copies them once, into its page. The sealed value of an entry, the one large
/// parameter, goes this way. The `[UInt8]` overload of `bind(_:at:)` copies (`SQLITE_TRANSIENT`), for small owned
/// values (a 32-byte keyed hash) whose copy costs less than pinning them would complicate the caller.
///
/// Thread safety: not thread-safe; it belongs to its connection, which one thread uses at a time.
final class SQLiteStatement {
    /// The statement's SQL text, as prepared.
    let sql: String
    let handle: OpaquePointer
    private let database: OpaquePointer
    private let path: String
    /// Whether ``SQLiteStatementCache`` keeps this statement, and whether it is lent out now.
    var isKept = false
    var isInUse = false

    init(sql: String, handle: OpaquePointer, database: OpaquePointer, path: String) {
        self.sql = sql
        self.handle = handle
        self.database = database
        self.path = path
    }

    // MARK: - Binding

    /// Binds a 64-bit integer to parameter `index` (from 1).
    ///
    /// - Throws: ``SQLiteError`` (``SQLiteError/Kind/sql`` for an index out of range).
    func bind(_ value: Int64, at index: Int) throws {
        try check(sqlite3_bind_int64(handle, Int32(clamping: index), value), "bind a parameter")
    }

    /// Binds a double to parameter `index` (from 1).
    ///
    /// - Throws: ``SQLiteError`` (``SQLiteError/Kind/sql`` for an index out of range).
    func bind(_ value: Double, at index: Int) throws {
        try check(sqlite3_bind_double(handle, Int32(clamping: index), value), "bind a parameter")
    }

    /// Binds `NULL` to parameter `index` (from 1).
    ///
    /// - Throws: ``SQLiteError`` (``SQLiteError/Kind/sql`` for an index out of range).
    func bindNull(at index: Int) throws {
        try check(sqlite3_bind_null(handle, Int32(clamping: index)), "bind a parameter")
    }

    /// Binds `text` (as UTF-8; SQLite copies it) to parameter `index` (from 1).
    ///
    /// - Throws: ``SQLiteError`` (``SQLiteError/Kind/tooBig`` past SQLite's length limit).
    /// - Complexity: O(n) in the text's UTF-8 length (the copy).
    func bind(_ text: String, at index: Int) throws {
        let length = UInt64(text.utf8.count)
        let result = text.withCString { pointer in
            sqlite3_bind_text64(handle, Int32(clamping: index), pointer, length, Self.transient, UInt8(SQLITE_UTF8))
        }
        try check(result, "bind a parameter")
    }

    /// Binds a copy of `bytes` as a blob to parameter `index` (from 1); an empty array binds an empty blob,
    /// not `NULL`.
    ///
    /// - Throws: ``SQLiteError`` (``SQLiteError/Kind/tooBig`` past SQLite's length limit).
    /// - Complexity: O(n) (the copy).
    func bind(_ bytes: [UInt8], at index: Int) throws {
        try bytes.withUnsafeBytes { try bind(buffer: $0, at: index, destructor: Self.transient) }
    }

    /// Binds `bytes` as a blob to parameter `index` (from 1) without copying them: they must stay valid and
    /// unchanged until the statement is reset, which ``SQLiteConnection/withStatement(_:_:)`` does when its
    /// closure returns. So bind and step inside the closure that lends the bytes:
    ///
    /// ```swift
    /// try sealed.withUnsafeBytes { bytes in
    ///     try connection.withStatement("INSERT INTO entry(value) VALUES (?1)") { statement in
    ///         try statement.bind(borrowing: bytes, at: 1)
    ///         _ = try statement.step()
    ///     }
    /// }
    /// ```
    ///
    /// An empty buffer binds an empty blob, not `NULL`.
    ///
    /// - Throws: ``SQLiteError`` (``SQLiteError/Kind/tooBig`` past SQLite's length limit).
    func bind(borrowing bytes: UnsafeRawBufferPointer, at index: Int) throws {
        // `nil` is SQLITE_STATIC: SQLite keeps the pointer and copies the bytes only when it writes them.
        try bind(buffer: bytes, at: index, destructor: nil)
    }

    private func bind(
        buffer: UnsafeRawBufferPointer, at index: Int, destructor: (@convention(c) (UnsafeMutableRawPointer?) -> Void)?
    ) throws {
        // A null pointer would bind NULL; an empty buffer may have no base address, so it binds a zero-length
        // blob explicitly.
        guard let base = buffer.baseAddress, !buffer.isEmpty else {
            try check(sqlite3_bind_zeroblob(handle, Int32(clamping: index), 0), "bind a parameter")
            return
        }
        try check(
            sqlite3_bind_blob64(handle, Int32(clamping: index), base, UInt64(buffer.count), destructor),
            "bind a parameter")
    }

    /// SQLITE_TRANSIENT, `(sqlite3_destructor_type)-1`: a C macro Swift does not import.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    // MARK: - Stepping

    /// Runs the statement to its next row.
    ///
    /// - Returns: `true` when a row is ready to read, `false` when the statement has finished.
    /// - Throws: ``SQLiteError`` with SQLite's result: ``SQLiteError/Kind/busy`` once the busy timeout is
    ///   used up, ``SQLiteError/Kind/corrupt`` for a damaged database, and so on.
    /// - Complexity: whatever the SQL costs; this does I/O.
    func step() throws -> Bool {
        let result = sqlite3_step(handle)
        if result == SQLITE_ROW { return true }
        if result == SQLITE_DONE { return false }
        throw SQLiteError(resultCode: result, database: database, operation: "step", path: path)
    }

    // MARK: - Reading the current row

    /// What a column of the current row holds.
    enum ColumnType: Equatable {
        case integer, double, text, blob, null
    }

    /// The storage class of column `index` (from 0) of the current row.
    func columnType(at index: Int) -> ColumnType {
        switch sqlite3_column_type(handle, Int32(clamping: index)) {
        case SQLITE_INTEGER: return .integer
        case SQLITE_FLOAT: return .double
        case SQLITE_TEXT: return .text
        case SQLITE_BLOB: return .blob
        default: return .null
        }
    }

    /// Whether column `index` (from 0) of the current row is `NULL`.
    func isNull(at index: Int) -> Bool { columnType(at: index) == .null }

    /// Column `index` (from 0) as a 64-bit integer (SQLite's conversion: `NULL` is 0).
    func int64(at index: Int) -> Int64 { sqlite3_column_int64(handle, Int32(clamping: index)) }

    /// Column `index` (from 0) as a double (SQLite's conversion: `NULL` is 0.0).
    func double(at index: Int) -> Double { sqlite3_column_double(handle, Int32(clamping: index)) }

    /// Column `index` (from 0) as text, or `nil` when it is `NULL`; invalid UTF-8 is repaired with U+FFFD.
    ///
    /// - Throws: ``SQLiteError`` when SQLite could not allocate the text.
    /// - Complexity: O(n) in the text's length.
    func text(at index: Int) throws -> String? {
        let column = Int32(clamping: index)
        guard sqlite3_column_type(handle, column) != SQLITE_NULL else { return nil }
        // The pointer first, then the length: SQLite's documented order (sqlite.org/c3ref/column_blob.html).
        let pointer = sqlite3_column_text(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        guard let pointer else {
            if count == 0 { return "" }
            throw SQLiteError(resultCode: SQLITE_NOMEM, database: database, operation: "read a column", path: path)
        }
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    /// Lends column `index` (from 0) as bytes without copying them; valid only inside `body` (SQLite owns
    /// them until the next step or reset). `NULL` and an empty blob both lend an empty buffer; tell them
    /// apart with ``isNull(at:)``.
    ///
    /// - Throws: What `body` throws, or ``SQLiteError`` when SQLite could not produce the bytes.
    func withBlob<Result>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> Result) throws -> Result {
        let column = Int32(clamping: index)
        // The pointer first, then the length: SQLite's documented order (sqlite.org/c3ref/column_blob.html).
        let pointer = sqlite3_column_blob(handle, column)
        let count = Int(sqlite3_column_bytes(handle, column))
        if pointer == nil && count != 0 {
            throw SQLiteError(resultCode: SQLITE_NOMEM, database: database, operation: "read a column", path: path)
        }
        return try body(UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
    }

    /// Column `index` (from 0) as a copied array of bytes, or `nil` when it is `NULL`.
    ///
    /// - Throws: ``SQLiteError`` when SQLite could not produce the bytes.
    /// - Complexity: O(n) (the copy).
    func blob(at index: Int) throws -> [UInt8]? {
        if isNull(at: index) { return nil }
        return try withBlob(at: index) { Array($0) }
    }

    // MARK: - Life cycle (for the connection)

    /// Resets the statement and drops its bindings (so no borrowed pointer stays behind).
    func reset() {
        // The result repeats the last step's error, which the caller already saw.
        _ = sqlite3_reset(handle)
        _ = sqlite3_clear_bindings(handle)
    }

    /// Frees the statement. Never called in a process that inherited it across `fork()`.
    func finalize() {
        _ = sqlite3_finalize(handle)
    }

    private func check(_ result: Int32, _ operation: String) throws {
        guard result != SQLITE_OK else { return }
        throw SQLiteError(resultCode: result, database: database, operation: operation, path: path)
    }
}

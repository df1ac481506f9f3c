#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// One connection to an SQLite database: open with the engine's pragmas, cached prepared statements, write
/// transactions, checkpoints, and errors sorted for the engine (``SQLiteError``).
///
/// The thin layer under DiskCache's SQLite engine (Docs/DiskEngine-SQLite.md); the engine never calls the C
/// API itself.
///
/// ```swift
/// let connection = try SQLiteConnection(path: folder + "/store.sqlite")
/// try connection.execute("CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value INTEGER)")
/// try connection.writeTransaction {
///     try connection.withStatement("INSERT OR REPLACE INTO meta VALUES (?1, ?2)") { statement in
///         try statement.bind("count", at: 1)
///         try statement.bind(Int64(0), at: 2)
///         _ = try statement.step()
///     }
/// }
/// ```
///
/// Thread safety: **one thread at a time.** The connection is opened `SQLITE_OPEN_NOMUTEX` (SQLite's
/// multi-thread mode: no mutex on the connection), so its owner must serialize every call, for example by
/// keeping it inside a `Locked` state or a serial queue; it is deliberately not `Sendable`. Other
/// connections, in this process or others, may use the same database at the same time (WAL: readers never
/// block the writer; one writer at a time, the others wait up to the busy timeout).
///
/// Fork: the connection remembers the process's fork generation (``SQLiteForkGeneration``) when it opens. In
/// a child forked after that, every call throws ``SQLiteError/Kind/inheritedAcrossFork`` and closing it
/// (including `deinit`) releases nothing: SQLite must never use or close a connection inherited across
/// `fork()`; the child opens its own.
final class SQLiteConnection {
    /// The database file.
    let path: String
    /// How it was opened.
    let options: Options
    /// The fork generation at open; tests change it to stand for a forked child.
    var openedInForkGeneration: UInt64
    private var database: OpaquePointer?
    private var statements: SQLiteStatementCache
    private let busyWait: SQLiteBusyWait
    /// The WAL hook of a read-write connection; `nil` for a read-only one.
    private(set) var walGuard: SQLiteWALGuard?
    /// Frames in the WAL after this connection's last commit (every process's frames since the WAL last
    /// restarted); 0 before its first commit or without a WAL hook.
    var walFramesAfterLastCommit: Int { walGuard?.framesAfterLastCommit ?? 0 }

    /// Opens (or creates) the database at `path` and sets the pragmas of `options`.
    ///
    /// Before SQLite sees the path, the database, its `-wal` and its `-shm` are checked with `lstat`: a link,
    /// FIFO, folder or device there fails with ``SQLiteError/Kind/notRegularFile`` (so a FIFO can never block
    /// the open, and a link is refused even where `SQLITE_OPEN_NOFOLLOW`, which SQLite applies to the
    /// database's path only, does not reach). The database is opened with `SQLITE_OPEN_NOFOLLOW` too, which
    /// closes most of the window between that check and the open, by a path whose folders are resolved
    /// first (``pathThroughLinkedFolders(_:)``). Opening reads the schema once, so a file
    /// that is not a database fails here with ``SQLiteError/Kind/corrupt``.
    ///
    /// - Parameters:
    ///   - path: The database file, an absolute path.
    ///   - options: Read-only or not, pragmas, busy timeout.
    /// - Throws: ``SQLiteError``: ``SQLiteError/Kind/notRegularFile``, ``SQLiteError/Kind/corrupt`` for a
    ///   file that is not a database, ``SQLiteError/Kind/readOnly`` when a new database cannot be created on
    ///   read-only media, ``SQLiteError/Kind/cannotOpen`` for a missing folder, ``SQLiteError/Kind/busy``
    ///   when another connection holds the lock WAL mode needs past the busy timeout.
    /// - Complexity: I/O: opens up to three files and reads the first pages.
    init(path: String, options: Options = Options()) throws {
        self.path = path
        self.options = options
        openedInForkGeneration = SQLiteForkGeneration.current
        statements = SQLiteStatementCache(capacity: options.statementCacheCapacity)
        busyWait = SQLiteBusyWait(timeoutMilliseconds: options.busyTimeoutMilliseconds)
        busyWait.onWait = options.onBusyWait
        for suffix in ["", "-wal", "-shm"] { try Self.refuseForeignItem(at: path + suffix) }

        var flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW
        if options.readOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE | (options.createIfMissing ? SQLITE_OPEN_CREATE : 0)
        }
        var handle: OpaquePointer?
        let result = sqlite3_open_v2(Self.pathThroughLinkedFolders(path), &handle, flags, nil)
        guard result == SQLITE_OK, let handle else {
            var error = SQLiteError(
                resultCode: handle.map { sqlite3_extended_errcode($0) } ?? result, database: handle,
                operation: "open", path: path)
            if error.kind == .cannotOpen && !options.readOnly { error.explainCreationFailure() }
            // SQLite allocates a handle even when the open fails; this process opened it, so it may close it.
            _ = sqlite3_close_v2(handle)
            throw error
        }
        database = handle
        do {
            _ = sqlite3_extended_result_codes(handle, 1)
            busyWait.install(on: handle)
            if options.persistentWAL && !options.readOnly {
                var on: Int32 = 1
                _ = sqlite3_file_control(handle, "main", SQLITE_FCNTL_PERSIST_WAL, &on)
            }
            #if !canImport(SQLite3)
            if !options.checkpointsOnClose && !options.readOnly {
                let result = strata_sqlite3_no_checkpoint_on_close(handle)
                guard result == SQLITE_OK else {
                    throw SQLiteError(resultCode: result, database: handle, operation: "configure", path: path)
                }
            }
            #endif
            for pragma in options.pragmas {
                let answer = pragma == Self.walPragma ? try switchToWAL() : try queryText(pragma)
                if pragma == Self.walPragma && answer?.lowercased() != "wal" {
                    throw SQLiteError(
                        .io, operation: "switch to WAL", path: path,
                        detail: "the journal mode stayed '\(answer ?? "none")'")
                }
            }
            if !options.readOnly && options.walCheckpointPages > 0 {
                let pageSize = Int(try queryText("PRAGMA page_size") ?? "") ?? 4_096
                let walGuard = SQLiteWALGuard(
                    checkpointPages: options.walCheckpointPages, limitBytes: options.journalSizeLimit,
                    restartWaitMilliseconds: options.walRestartWaitMilliseconds,
                    checkpoint: { [unowned self] mode, wait in
                        (try? self.checkpoint(mode, waitingAtMost: wait))?.isComplete ?? false
                    })
                walGuard.install(on: handle, pageSize: pageSize)
                self.walGuard = walGuard
            }
            // Reads the schema: a file that is not a database (or is damaged at its root) fails here, not at
            // the engine's first query.
            _ = try queryText("SELECT count(*) FROM sqlite_master")
        } catch {
            close()
            throw error
        }
    }

    deinit {
        close()
    }

    /// Closes the connection; later calls throw ``SQLiteError/Kind/closed``. Calling it again does nothing.
    ///
    /// In a child that inherited the connection across `fork()`, nothing is finalized or closed (that would
    /// act on the parent's locks and WAL): the handle is abandoned, a bounded leak in that child.
    func close() {
        guard let database else { return }
        self.database = nil
        if !wasOpenedInThisProcess {
            statements.abandonAll()
            return
        }
        statements.finalizeAll()
        // close_v2 cannot fail on a connection without unfinalized statements; its result says nothing more.
        _ = sqlite3_close_v2(database)
    }

    /// Whether the connection is open and was opened in this process.
    var isUsable: Bool { database != nil && wasOpenedInThisProcess }

    /// Whether no `fork()` happened between the open and now (false in a child that inherited the connection).
    private var wasOpenedInThisProcess: Bool { openedInForkGeneration == SQLiteForkGeneration.current }

    /// A bound in milliseconds on the busy handler's wait while set (``checkpoint(_:waitingAtMost:)``).
    var boundedBusyWait: Int? {
        get { busyWait.boundedMilliseconds }
        set { busyWait.boundedMilliseconds = newValue }
    }

    /// How many times a statement of this connection waited for another connection's lock.
    var busyWaits: Int { busyWait.waits }

    /// Called on the waiting thread before each wait for another connection's lock (for tests).
    var onBusyWait: (@Sendable (Int) -> Void)? {
        get { busyWait.onWait }
        set { busyWait.onWait = newValue }
    }

    // MARK: - Statements

    /// Runs `body` with the prepared statement for `sql`, compiled on first use and kept for reuse.
    ///
    /// When `body` returns or throws, the statement is reset and its bindings cleared, so nothing bound
    /// (in particular bytes bound with ``SQLiteStatement/bind(borrowing:at:)``) is used after `body`.
    ///
    /// - Parameters:
    ///   - sql: One SQL statement with `?1`-style parameters; never build it with values in it (each distinct
    ///     text is a new statement to compile and keep).
    ///   - body: Binds, steps and reads the statement; do not keep it past the call.
    /// - Returns: What `body` returns.
    /// - Throws: ``SQLiteError`` when the connection is closed or inherited across `fork()`, or `sql` does
    ///   not compile (``SQLiteError/Kind/sql``, or ``SQLiteError/Kind/corrupt`` for a damaged schema); what
    ///   `body` throws.
    /// - Complexity: O(k) in the number of kept statements (a comparison each) plus what `body` does; the
    ///   first use compiles.
    func withStatement<Result>(_ sql: String, _ body: (SQLiteStatement) throws -> Result) throws -> Result {
        let database = try openDatabase()
        let statement: SQLiteStatement
        if let kept = statements.checkOut(sql) {
            statement = kept
        } else {
            let keep = statements.shouldKeep(sql)
            statement = try prepare(sql, persistent: keep, database: database)
            if keep { statements.keep(statement) }
        }
        defer {
            statement.reset()
            statements.checkIn(statement)
        }
        return try body(statement)
    }

    /// Runs `sql`, which may hold several statements separated by semicolons and take no parameters (schema
    /// changes). Nothing is kept for reuse.
    ///
    /// - Throws: ``SQLiteError`` from the first statement that fails.
    /// - Complexity: I/O; compiles every statement.
    func execute(_ sql: String) throws {
        let database = try openDatabase()
        let result = sqlite3_exec(database, sql, nil, nil, nil)
        guard result == SQLITE_OK else {
            throw SQLiteError(resultCode: result, database: database, operation: "execute", path: path)
        }
    }

    /// How many rows the last `INSERT`, `UPDATE` or `DELETE` of this connection changed.
    var changes: Int {
        guard let database, wasOpenedInThisProcess else { return 0 }
        return Int(sqlite3_changes(database))
    }

    /// The data version of the main database in the snapshot of this connection's open read transaction
    /// (`SQLITE_FCNTL_DATA_VERSION`, SQLite 3.26+): it changes whenever a transaction that changed the file
    /// has committed since this connection's previous read transaction, whether through this connection,
    /// another one of this process or another process. Read it only while a statement of this connection is
    /// stepping (a read transaction is open); `nil` when the connection is closed, inherited across `fork()`,
    /// or SQLite refuses.
    ///
    /// - Complexity: O(1); no I/O and no lock (the counter lives in the connection's pager).
    var dataVersion: UInt32? {
        guard let database, wasOpenedInThisProcess else { return nil }
        var version: UInt32 = 0
        guard sqlite3_file_control(database, "main", SQLITE_FCNTL_DATA_VERSION, &version) == SQLITE_OK else {
            return nil
        }
        return version
    }

    /// Bytes a caller read through this connection, with the ``dataVersion`` of the snapshot they were read
    /// in: while a later read transaction sees the same data version, the file has not changed, so the bytes
    /// are still what the same query would return. The layer only keeps them (the engine's key epoch salt).
    var remembered: (dataVersion: UInt32, bytes: Data)?

    /// The rowid of the last row this connection inserted.
    var lastInsertRowID: Int64 {
        guard let database, wasOpenedInThisProcess else { return 0 }
        return sqlite3_last_insert_rowid(database)
    }

    /// Whether a transaction is open on this connection.
    var isInTransaction: Bool {
        guard let database, wasOpenedInThisProcess else { return false }
        return sqlite3_get_autocommit(database) == 0
    }

    // MARK: - Internals

    /// The handle, after checking that the connection is open and was opened in this process.
    func openDatabase() throws -> OpaquePointer {
        guard let database else {
            throw SQLiteError(.closed, operation: "use", path: path, detail: "the connection is closed")
        }
        guard wasOpenedInThisProcess else {
            throw SQLiteError(
                .inheritedAcrossFork, operation: "use", path: path,
                detail: "the connection was opened before this process was forked; open a new one in the child")
        }
        return database
    }

    private func prepare(_ sql: String, persistent: Bool, database: OpaquePointer) throws -> SQLiteStatement {
        var handle: OpaquePointer?
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let result = sqlite3_prepare_v3(database, sql, -1, flags, &handle, nil)
        guard result == SQLITE_OK, let handle else {
            // A string holding only a comment or whitespace compiles to no statement at all.
            let code = result == SQLITE_OK ? SQLITE_MISUSE : result
            throw SQLiteError(resultCode: code, database: database, operation: "prepare", path: path)
        }
        return SQLiteStatement(sql: sql, handle: handle, database: database, path: path)
    }

    /// The first column of the first row of `sql` as text (`nil` for no row or `NULL`), with a statement that
    /// is not kept: for pragmas, run once.
    private static let walPragma = "PRAGMA journal_mode=WAL"

    /// Runs `PRAGMA journal_mode=WAL`, waiting out another connection's lock as the busy handler would.
    ///
    /// A new database starts in rollback mode, and the switch takes a read lock before it asks for the write
    /// lock: SQLite never calls the busy handler for a connection that already holds a read lock (waiting
    /// could deadlock in rollback mode), so when several processes open a new store at once all but one get
    /// `SQLITE_BUSY` at once. Once the first switch commits, the pragma only reads and never conflicts.
    private func switchToWAL() throws -> String? {
        var attempt = 0
        while true {
            do {
                return try queryText(Self.walPragma)
            } catch let error as SQLiteError where error.kind == .busy {
                guard busyWait.waitBeforeRetry(attempt: attempt) else { throw error }
                attempt += 1
            }
        }
    }

    private func queryText(_ sql: String) throws -> String? {
        let database = try openDatabase()
        let statement = try prepare(sql, persistent: false, database: database)
        defer { statement.finalize() }
        return try statement.step() ? statement.text(at: 0) : nil
    }

    /// `path` with the folders above the database resolved (`realpath(3)`); `path` itself when its folder
    /// cannot be resolved (SQLite then reports the open's failure).
    ///
    /// `SQLITE_OPEN_NOFOLLOW` refuses a link in any component of the path SQLite walks, not only at the
    /// database: a store in a linked folder (`/tmp` and `/var` on macOS, a home or caches folder moved behind
    /// a link, a store named through a link) would never open. Those folders are the caller's choice, as they
    /// are for the file engine; a link at the database itself is still refused, by `refuseForeignItem` and by
    /// the flag.
    static func pathThroughLinkedFolders(_ path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return path }
        guard let resolved = realpath(String(path[..<slash]), nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved) + path[slash...]
    }

    /// Throws ``SQLiteError/Kind/notRegularFile`` when something other than a regular file is at `path`;
    /// nothing there, or a path `lstat` cannot reach, is left for SQLite to report.
    private static func refuseForeignItem(at path: String) throws {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        let status = FileStatus(info)
        guard !status.isRegularFile else { return }
        throw SQLiteError(.notRegularFile, operation: "open", path: path, detail: "\(status.kind), not a regular file")
    }
}

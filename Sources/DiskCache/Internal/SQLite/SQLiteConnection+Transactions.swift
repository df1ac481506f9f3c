extension SQLiteConnection {
    /// Runs `body` in a write transaction started with `BEGIN IMMEDIATE`, commits when it returns and rolls
    /// back when it throws.
    ///
    /// `IMMEDIATE` takes the write lock at `BEGIN`, where SQLite's busy handler can wait for another writer.
    /// A deferred `BEGIN` that reads and then writes would try to upgrade a read transaction instead, which
    /// SQLite refuses at once with `SQLITE_BUSY` without calling the busy handler (it could deadlock), so
    /// every write of the engine starts here (sqlite.org/lang_transaction.html).
    ///
    /// - Parameter body: The statements of the transaction; it runs on the calling thread.
    /// - Returns: What `body` returns, once committed.
    /// - Throws: ``SQLiteError/Kind/busy`` when another connection kept the write lock past the busy timeout
    ///   (nothing ran); ``SQLiteError/Kind/sql`` when a transaction is already open on this connection; what
    ///   `body` throws, or the commit's error, after rolling back.
    /// - Complexity: what `body` does, plus the commit's I/O (a WAL append; a sync with `synchronous=FULL`).
    func writeTransaction<Result>(_ body: () throws -> Result) throws -> Result {
        try transaction(begin: "BEGIN IMMEDIATE", body)
    }

    /// Runs `body` in a read transaction (a deferred `BEGIN`), so several reads see one snapshot; ends it
    /// when `body` returns or throws.
    ///
    /// `body` must only read: a write in it would be the read-to-write upgrade ``writeTransaction(_:)``
    /// avoids, and fails at once with ``SQLiteError/Kind/busy`` whenever another connection writes.
    ///
    /// - Returns: What `body` returns.
    /// - Throws: ``SQLiteError/Kind/sql`` when a transaction is already open on this connection; what `body`
    ///   throws.
    func readTransaction<Result>(_ body: () throws -> Result) throws -> Result {
        try transaction(begin: "BEGIN DEFERRED", body)
    }

    private func transaction<Result>(begin: String, _ body: () throws -> Result) throws -> Result {
        // Refuses a closed or inherited connection before asking it anything.
        _ = try openDatabase()
        guard !isInTransaction else {
            throw SQLiteError(
                .sql, operation: begin.lowercased(), path: path,
                detail: "a transaction is already open on this connection (transactions do not nest)")
        }
        try run(begin)
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            // SQLite rolls back by itself after some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM); roll back
            // only what is still open, and keep the first error.
            if isInTransaction { try? run("ROLLBACK") }
            throw error
        }
    }

    /// Runs a statement without parameters or rows (`BEGIN`, `COMMIT`), kept for reuse.
    private func run(_ sql: String) throws {
        try withStatement(sql) { statement in _ = try statement.step() }
    }
}

import CacheCore
import CacheCrypto

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

// The database: its schema, the key-check record that marks the store as this engine's, the key epoch kept
// in the database, and the connections (one writer, pooled readers).
extension SQLiteEngine {
    /// The schema's version, in `meta`; a database with another one is refused as `.unsupportedFormat`.
    static let schemaVersion: Int64 = 1

    /// The schema (Docs/DiskFormat.md, "The SQLite engine"). `entry` is a rowid table with the sealed value
    /// last, so reading the other columns never touches its overflow pages; `name` is the key's keyed hash
    /// (hex), the only thing that names a key; `removable` is the instant (ms since 1970) from which the row
    /// may be removed (its expiry, or the end of its stale window), `NULL` for never; `serial` is random per
    /// write, so "remove if unchanged" can tell a row from the one that replaced it.
    static let schema = [
        """
        CREATE TABLE IF NOT EXISTS entry(
            id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, serial INTEGER NOT NULL, removable INTEGER,
            accessed INTEGER NOT NULL, size INTEGER NOT NULL, file TEXT, value BLOB)
        """,
        "CREATE INDEX IF NOT EXISTS entry_accessed ON entry(accessed)",
        "CREATE TABLE IF NOT EXISTS meta(name TEXT PRIMARY KEY, value) WITHOUT ROWID",
        "CREATE TABLE IF NOT EXISTS tag(name TEXT PRIMARY KEY, counter BLOB NOT NULL) WITHOUT ROWID",
        """
        CREATE TABLE IF NOT EXISTS totals(
            id INTEGER PRIMARY KEY CHECK (id = 1), count INTEGER NOT NULL, bytes INTEGER NOT NULL,
            hits INTEGER NOT NULL DEFAULT 0, misses INTEGER NOT NULL DEFAULT 0,
            insertions INTEGER NOT NULL DEFAULT 0, evictions INTEGER NOT NULL DEFAULT 0,
            expirations INTEGER NOT NULL DEFAULT 0, corrupt INTEGER NOT NULL DEFAULT 0,
            failures INTEGER NOT NULL DEFAULT 0)
        """,
        "INSERT OR IGNORE INTO totals(id, count, bytes) VALUES (1, 0, 0)",
    ]

    /// The connection options for this store: WAL, `NORMAL` or `FULL` (with `fullfsync`) by durability.
    var connectionOptions: SQLiteConnection.Options {
        var options = SQLiteConnection.Options()
        options.readOnly = isReadOnly
        options.createIfMissing = !isReadOnly
        // The engine checkpoints a large WAL itself when it closes (checkpointIfWALIsLarge()).
        options.checkpointsOnClose = false
        if configuration.durability == .fsync {
            options.synchronous = .full
            options.fullFsync = true
        }
        return options
    }

    // MARK: - The key-check record

    /// Reads `store.check` (creating it for a new store) and checks the master key against it.
    ///
    /// - Throws: `.wrongMasterKey`, `.corruptEntry` for a damaged record, `.unsupportedFormat` for a store of
    ///   another engine or a newer format; nothing is deleted.
    func checkKey() throws {
        if try readCheckRecord() != nil { return }
        try requireWritable("create the store")
        let record = try KeyCheckRecord.make(
            salt: try CryptoBackend.randomBytes(count: KeyCheckRecord.saltSize), master: master,
            version: KeyCheckRecord.sqliteVersion)
        // Linked into place only if absent: two processes creating the store at once keep the first record.
        try files.write(
            in: folders.root, name: StoreLayout.checkRecordName, temporaryFolder: folders.temporary, modified: nil,
            replacing: false, placing: { try $0() }, clearingDirectory: { _, _ in false },
            fill: { fd, path in try record.withUnsafeBytes { try FileSystem.writeAll(fd, $0, path: path) } })
        guard try readCheckRecord() != nil else {
            throw CacheError(.io, "the key-check record vanished right after it was written", path: layout.checkRecord)
        }
    }

    private func readCheckRecord() throws -> Data? {
        let path = layout.checkRecord
        guard let (data, _) = try KeyCheckRecord.readFile(in: folders.root, path: path, storeName: storeName) else {
            return nil
        }
        if data.count > 4, data[data.startIndex + 4] == KeyCheckRecord.version {
            throw CacheError(
                .unsupportedFormat,
                "store '\(storeName)' was created with the file engine (one file per entry), not the SQLite engine; "
                    + "open it with DiskCacheConfiguration.Engine.files or .automatic, or migrate it", path: path)
        }
        return try KeyCheckRecord.salt(
            from: data, master: master, path: path, storeName: storeName, version: KeyCheckRecord.sqliteVersion)
    }

    // MARK: - Opening

    /// Opens the writer connection, creating the schema and the first epoch of a new database; a file that
    /// is not a database, or a link, FIFO or folder where the database or its `-wal` or `-shm` belong, is
    /// moved to `quarantine/` and the store starts again empty (it is a cache), reported once.
    func openDatabase() throws {
        try writer.withLock { writer in
            let (connection, identity) = try openWriter(salt: nil)
            writer = connection
            state.withLock { $0.database = identity }
            try adoptEpoch(onOpened: connection)
        }
    }

    /// Opens a writer connection on the database at the path, made with first epoch `salt` (or a random one)
    /// when missing; quarantines a damaged one (``openDatabase()``).
    ///
    /// - Returns: The connection, and the file that was at the path just before it opened.
    func openWriter(salt: Data?) throws -> (SQLiteConnection, FileStatus?) {
        do {
            return try openPrepared(salt: salt)
        } catch let error as SQLiteError where error.kind == .corrupt || error.kind == .notRegularFile {
            guard !isReadOnly else { throw error }
            try quarantineDatabase(because: error)
            return try openPrepared(salt: salt)
        }
    }

    /// Adopts the epoch of a just-opened writer, replacing a damaged one first (in a transaction of its own).
    func adoptEpoch(onOpened connection: SQLiteConnection) throws {
        if !isReadOnly, try epochSalt(on: connection) == nil {
            _ = try connection.writeTransaction { try adoptEpoch(from: connection) }
        }
        try adoptEpoch(from: connection)
    }

    private func openPrepared(salt: Data?) throws -> (SQLiteConnection, FileStatus?) {
        let (connection, identity) = try openConnection(creating: true)
        try prepareSchema(on: connection, salt: salt)
        return (connection, identity)
    }

    /// Opens a connection on the database at the path, creating it first when `creating` (the writer; a
    /// reader never makes a database deleted from outside again).
    ///
    /// - Returns: The connection, and the file at the path just before SQLite opened it: if the file is
    ///   replaced in between, the next look at the path sees a file other than this one and follows it, where
    ///   a look after the open could record the new file for a connection on the old one.
    func openConnection(creating: Bool) throws -> (SQLiteConnection, FileStatus?) {
        if creating && !isReadOnly {
            // Created owner-only before SQLite sees it: SQLite gives the -wal and -shm the database's mode, and
            // would create the database itself with the umask's (often 0644). O_EXCL: only a file this call
            // creates is opened and closed here — closing any descriptor of a database drops every POSIX lock
            // this process holds on it, SQLite's included (sqlite.org/howtocorrupt.html, 2.2), and another
            // process would then checkpoint and delete the WAL under this one's readers.
            if let fd = try? folders.root.openFile(Self.databaseName, O_RDWR | O_CREAT | O_EXCL) {
                defer { FileSystem.closeFile(fd) }
                // It has the store folder's class already (SQLiteStoreFolders.swift); set on the file too, so the
                // database holding every entry does not depend on inheritance alone. The -wal and -shm are left
                // to inheritance: SQLite makes them, and opening them here would break the rule above.
                try DataProtection.apply(configuration.fileProtection, descriptor: fd, path: databasePath)
            }
        }
        let identity = databaseAtPath()
        var options = connectionOptions
        options.createIfMissing = creating && !isReadOnly
        return (try SQLiteConnection(path: databasePath, options: options), identity)
    }

    /// Creates the schema of a new database, with its first epoch: `salt`, or a random one.
    private func prepareSchema(on connection: SQLiteConnection, salt: Data? = nil) throws {
        // A complete schema needs no write transaction: parsing the statements below and taking the write
        // lock was most of what opening an existing store cost in SQLite.
        if !isReadOnly, try !hasCompleteSchema(on: connection) {
            try connection.writeTransaction {
                for statement in Self.schema { try connection.execute(statement) }
                try connection.withStatement("INSERT OR IGNORE INTO meta(name, value) VALUES ('format', ?1)") {
                    try $0.bind(Self.schemaVersion, at: 1)
                    _ = try $0.step()
                }
                // Only a new database gets its first epoch here: a missing epoch row in an existing one is damage,
                // repaired and reported by adoptEpoch(from:).
                if connection.changes > 0 {
                    try Self.storeEpochSalt(
                        try salt ?? CryptoBackend.randomBytes(count: KeyCheckRecord.saltSize), on: connection)
                }
            }
        }
        let format = try connection.withStatement("SELECT value FROM meta WHERE name = 'format'") {
            try $0.step() ? $0.int64(at: 0) : nil
        }
        guard format == Self.schemaVersion else {
            throw CacheError(
                .unsupportedFormat,
                "store '\(storeName)' has database format \(format.map(String.init) ?? "none"); this build reads "
                    + "format \(Self.schemaVersion)", path: databasePath)
        }
    }

    /// Whether every table and index of ``schema`` exists, `totals` holds its row and `meta` its `format` row,
    /// read without a transaction of its own: what ``schema``'s statements would otherwise find already done.
    /// (Literal SQL: building it from a list cost more than the statements it saves.)
    private func hasCompleteSchema(on connection: SQLiteConnection) throws -> Bool {
        let objects = try connection.withStatement(
            """
            SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('entry', 'meta', 'tag', 'totals')
                OR type = 'index' AND name = 'entry_accessed'
            """
        ) { try $0.step() ? $0.int64(at: 0) : 0 }
        guard objects == 5 else { return false }
        // The format row too: where it is missing, the statements below add it, and with it a new epoch.
        return try connection.withStatement(
            "SELECT (SELECT count(*) FROM totals WHERE id = 1) + (SELECT count(*) FROM meta WHERE name = 'format')"
        ) { try $0.step() ? $0.int64(at: 0) == 2 : false }
    }

    /// Moves the database and its `-wal` and `-shm` (links and FIFOs themselves, never their targets) to
    /// `quarantine/`, and deletes the large-value files, which no row names any more.
    private func quarantineDatabase(because error: SQLiteError) throws {
        let quarantine = try DiskStore.translatingErrors { () throws -> Directory in
            try folders.root.makeDirectory(StoreLayout.quarantineName)
            return try folders.root.directory(StoreLayout.quarantineName)
        }
        let suffix = "-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        for name in [Self.databaseName, Self.databaseName + "-wal", Self.databaseName + "-shm"] {
            let moved: Result<Void, FileError> = Result { () throws(FileError) in
                try folders.root.rename(name, to: quarantine, as: name + suffix)
            }
            if case .failure(let error) = moved, !error.isNotFound { throw error.cacheError }
        }
        var stale: [String] = []
        try? folders.large.forEach { name, _ in stale.append(name) }
        for name in stale { unlinkLargeFile(name, of: nil) }
        Self.pruneQuarantinedDatabases(in: quarantine)
        report(
            .corruptEntryRemoved,
            "the database could not be used (\(error.kind)); it was moved to \(quarantine.path) and the store starts "
                + "again empty", path: databasePath, error: error)
    }

    /// How many quarantined databases (each with its `-wal` and `-shm`) `quarantine/` keeps: the newest say what
    /// went wrong, and a store damaged again and again must not fill its volume with copies of itself.
    static let quarantinedDatabasesKept = 3

    /// Deletes all but the ``quarantinedDatabasesKept`` newest quarantined databases. A set is a database's
    /// files moved together, named `store.sqlite[-wal|-shm]-SUFFIX`; its age is the latest status change of
    /// its files (the rename into `quarantine/` sets it, and nothing can set it back). Only regular files are
    /// deleted: a link or a FIFO moved there is unlinked as itself, a folder is left. Best effort.
    static func pruneQuarantinedDatabases(in quarantine: Directory) {
        var sets: [String: (movedAt: timespec, names: [String])] = [:]
        try? quarantine.forEach { name, status in
            guard name.hasPrefix(databaseName + "-"), let dash = name.lastIndex(of: "-") else { return }
            let suffix = String(name[name.index(after: dash)...])
            var set = sets[suffix] ?? (status.changed, [])
            if (status.changed.tv_sec, status.changed.tv_nsec) > (set.movedAt.tv_sec, set.movedAt.tv_nsec) {
                set.movedAt = status.changed
            }
            if !status.isDirectory { set.names.append(name) }
            sets[suffix] = set
        }
        let newestFirst = sets.values.sorted {
            ($0.movedAt.tv_sec, $0.movedAt.tv_nsec) > ($1.movedAt.tv_sec, $1.movedAt.tv_nsec)
        }
        for set in newestFirst.dropFirst(quarantinedDatabasesKept) {
            for name in set.names { try? quarantine.unlink(name) }
        }
    }

    // MARK: - Connections

    /// Write transactions this instance has begun.
    var writeTransactionCount: Int { state.withLock { $0.writeTransactions } }

    /// Runs `body` on the writer connection inside one `BEGIN IMMEDIATE` transaction.
    ///
    /// - Parameter recreating: Whether a database deleted from outside is made again (an entry is being
    ///   written), rather than ``SQLiteDatabaseGone`` thrown (SQLiteEngine+Following.swift).
    func write<T>(recreating: Bool = false, _ body: (SQLiteConnection) throws -> T) throws -> T {
        // Events reported inside (a damaged tag counter) reach the observer after the writer lock is released:
        // an observer that writes to this store would otherwise wait for that lock forever.
        let now = clock.now
        var idle = SQLiteIdleCheckpoint.Action.none
        // The idle timer is armed after the writer lock is released (it may fire at once with a test's scheduler).
        defer { perform(idle) }
        return try events.holding {
            try writer.withLock { connection -> T in
                // Also opens a writer where there is none yet, or only one inherited across fork().
                try followDatabase(&connection, recreating: recreating)
                guard let open = connection else { throw SQLiteDatabaseGone() }
                idle = state.withLock {
                    $0.writeTransactions += 1
                    return Self.noteWrite(&$0, at: now)
                }
                return try open.writeTransaction { try body(open) }
            }
        }
    }

    /// Runs `body` on a reader connection from the pool; when none is pooled, on the writer if no thread holds
    /// it, else on a newly opened reader.
    ///
    /// The writer serves a read outside any transaction of its own (an autocommit `SELECT` sees the last commit,
    /// as a reader does) and its lock is only tried, never waited for: a thread inside a write, or another
    /// thread writing, sends the read to a reader. So a process that reads one thread at a time — a `strata get`
    /// — opens one connection, not two (a second open cost about 0.7 M instructions, a dozen system calls and its
    /// page cache; Docs/Performance.md). `body` must not write: it runs under the writer's lock.
    func read<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        try followDatabaseIfDue()
        let (pooled, generation) = readers.withLock { ($0.connections.popLast(), $0.generation) }
        if pooled == nil, let result = try readOnIdleWriter(body) { return result }
        let connection: SQLiteConnection
        if let pooled, pooled.isUsable {
            connection = pooled
        } else {
            // A new connection opens whatever is at the path: it must be the file the writer uses.
            try followDatabaseIfDue(force: true)
            connection = try openConnection(creating: false).0
        }
        defer {
            let kept = readers.withLock { pool in
                guard pool.generation == generation else { return false }
                pool.connections.append(connection)
                return true
            }
            if !kept { connection.close() }
        }
        return try body(connection)
    }

    /// `body`'s result on the writer connection if no thread holds the writer and it is open, usable and outside
    /// a transaction; `nil` otherwise. Events `body` reports reach the observer after the lock is released, as a
    /// write's do.
    private func readOnIdleWriter<T>(_ body: (SQLiteConnection) throws -> T) throws -> T? {
        try events.holding {
            try writer.withLockIfAvailable { connection -> T? in
                guard let open = connection, open.isUsable, !open.isInTransaction else { return nil }
                return try body(open)
            } ?? nil
        }
    }

    // MARK: - The key epoch

    /// The epoch salt the database holds now, on `connection`; `nil` when the row is missing or damaged.
    func epochSalt(on connection: SQLiteConnection) throws -> Data? {
        let salt = try connection.withStatement("SELECT value FROM meta WHERE name = 'epoch'") { statement in
            try statement.step() ? try statement.blob(at: 0) : nil
        }
        guard let salt, salt.count == KeyCheckRecord.saltSize else { return nil }
        return Data(salt)
    }

    /// The salt a missing or damaged epoch row reads as: no record is sealed under it, so every entry is a miss
    /// (and is removed as met, as after a wipe) until a writer gives the row a fresh salt.
    static let damagedEpochSalt = Data(count: KeyCheckRecord.saltSize)

    /// Makes the database's epoch the one in use, if it changed; returns it.
    ///
    /// A missing or damaged epoch row is a wipe, not a lasting error (it is a cache): inside a write
    /// transaction the row gets a fresh salt, reported once; elsewhere it reads as ``damagedEpochSalt``.
    @discardableResult
    func adoptEpoch(from connection: SQLiteConnection) throws -> Epoch {
        if let salt = try epochSalt(on: connection) { return try adoptEpoch(salt: salt) }
        // Readers never write (and the engine's reads hold no transaction): only the writer repairs.
        guard connection.isInTransaction, !isReadOnly else { return try adoptEpoch(salt: Self.damagedEpochSalt) }
        return try adoptEpoch(salt: try replaceDamagedEpoch(on: connection))
    }

    /// Writes a fresh epoch salt in place of a missing or damaged one, in the caller's write transaction.
    private func replaceDamagedEpoch(on connection: SQLiteConnection) throws -> Data {
        let salt = try CryptoBackend.randomBytes(count: KeyCheckRecord.saltSize)
        try Self.storeEpochSalt(salt, on: connection)
        state.withLock { $0.recency = RecencyBuffer() }
        report(
            .corruptEntryRemoved,
            "the key epoch in the database was missing or damaged; a new epoch was started, so every earlier entry "
                + "is unreadable and is removed as it is met", path: databasePath, error: nil)
        return salt
    }

    /// Sets the epoch row to `salt`, creating it when it was deleted.
    static func storeEpochSalt(_ salt: Data, on connection: SQLiteConnection) throws {
        try connection.withStatement("INSERT OR REPLACE INTO meta(name, value) VALUES ('epoch', ?1)") {
            try $0.bind(Array(salt), at: 1)
            _ = try $0.step()
        }
    }

    /// Makes the epoch of `salt` the one in use, if it is not already; returns it. A salt of the wrong length
    /// (an edited row, read with a row by ``findRow(name:)``) is the damaged epoch.
    @discardableResult
    func adoptEpoch(salt: Data) throws -> Epoch {
        let salt = salt.count == KeyCheckRecord.saltSize ? salt : Self.damagedEpochSalt
        if let current = state.withLock({ $0.epoch.salt == salt ? $0.epoch : nil }) { return current }
        let epoch = try Epoch.derive(master: master, salt: salt)
        state.withLock { $0.epoch = epoch }
        return epoch
    }

    /// The epoch in use when its salt is `salt` (compared under one acquisition of the state's lock, with no
    /// copy), else the database's new one, adopted.
    func adoptEpoch(matching salt: UnsafeRawBufferPointer) throws -> Epoch {
        let current = state.withLock { state in
            // memcmp, not elementsEqual: the generic byte loop cost about 900 instructions a get (callgrind).
            state.epoch.salt.withUnsafeBytes { held in
                held.count == salt.count
                    && (held.isEmpty || memcmp(held.baseAddress!, salt.baseAddress!, held.count) == 0)
            } ? state.epoch : nil
        }
        return try current ?? adoptEpoch(salt: Data(salt))
    }

    var currentEpoch: Epoch { state.withLock { $0.epoch } }

    /// Whether `name` has the form of a large-value file: a row name, `-`, 16 hex digits.
    static func isLargeFileName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        let isHex: (UInt8) -> Bool = { (48...57).contains($0) || (97...102).contains($0) }
        return bytes.count == 81 && bytes[64] == UInt8(ascii: "-") && bytes[..<64].allSatisfy(isHex)
            && bytes[65...].allSatisfy(isHex)
    }
}

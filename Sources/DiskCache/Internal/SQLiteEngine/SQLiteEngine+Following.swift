import CacheCore

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

/// Thrown inside the engine while its database is missing from its path (deleted from outside) and the
/// operation does not make it again: reads are misses, and removals, trims and flushes have nothing to do.
struct SQLiteDatabaseGone: Error {}

/// The reader connections not in use, and the generation of the database file they were opened on.
struct SQLiteReaderPool {
    var connections: [SQLiteConnection] = []
    /// One more each time the engine follows its path to another file: a connection checked out under an
    /// older generation is closed when given back.
    var generation = 0
}

// Following the database at the path (Docs/DiskCache.md, "Engines"). A connection keeps the file it opened,
// so a database deleted or replaced from outside (a wipe by `rm -rf`, another instance that made the store
// again) would leave this instance reading and writing a file nobody else sees. Writes, trims and wipes look
// at the path before every transaction; reads, which are hot, at most once a second on the engine's clock,
// and whenever a reader connection is opened.
extension SQLiteEngine {
    /// How long reads trust that the database at the path is the one they use.
    static let databaseCheckInterval: TimeInterval = 1

    /// The file at the database's path now, without following a link; `nil` when nothing is there.
    func databaseAtPath() -> FileStatus? {
        var info = stat()
        guard lstat(databasePath, &info) == 0 else { return nil }
        return FileStatus(info)
    }

    /// For a read: follows the path when the last look is a second old (or the clock went back), the
    /// database is missing, or `force` (a connection is about to be opened).
    ///
    /// - Throws: ``SQLiteDatabaseGone`` while the database is missing.
    func followDatabaseIfDue(force: Bool = false) throws {
        let now = clock.now
        let due = state.withLock { state -> FileStatus?? in
            let age = now.timeIntervalSince(state.databaseCheckedAt)
            guard force || state.database == nil || !(0..<Self.databaseCheckInterval).contains(age) else {
                return .none
            }
            state.databaseCheckedAt = now
            return .some(state.database)
        }
        guard case .some(let held) = due else { return }
        // The stat alone in the common case: the writer lock only when there is something to follow.
        if let held, let onDisk = databaseAtPath(), onDisk.isSameFile(as: held) { return }
        try followDatabase(recreating: false)
    }

    /// Takes the writer lock and follows the path (``followDatabase(_:recreating:)``); what it reports (a
    /// quarantined database, a repaired epoch) reaches the observer after the lock is released, so an observer
    /// that writes to this store does not wait for it forever.
    func followDatabase(recreating: Bool) throws {
        try events.holding { try writer.withLock { try followDatabase(&$0, recreating: recreating) } }
    }

    /// With the writer lock held (`connection` is the writer): makes the connections use the database now
    /// at the path. A file other than the one in use is opened (folders opened again, the buffered accesses
    /// dropped); a missing one is made again, with the store's folders, key-check record and this
    /// instance's epoch, when `recreating` (an entry is being written), else the store reads as empty.
    ///
    /// - Throws: ``SQLiteDatabaseGone`` for a missing database not to be made again; what opening throws.
    func followDatabase(_ connection: inout SQLiteConnection?, recreating: Bool) throws {
        let held = state.withLock { $0.database }
        let onDisk = databaseAtPath()
        if let held, let onDisk, onDisk.isSameFile(as: held), let open = connection, open.isUsable { return }
        if let held, onDisk.map({ !$0.isSameFile(as: held) }) ?? true { detachConnections(&connection) }
        guard onDisk != nil || (recreating && !isReadOnly) else { throw SQLiteDatabaseGone() }
        if held.flatMap({ held in onDisk.map { $0.isSameFile(as: held) } }) != true {
            try reopenFolders()
            if onDisk == nil { try checkKey() }
        }
        let (opened, identity) = try openWriter(salt: onDisk == nil ? currentEpoch.salt : nil)
        connection = opened
        state.withLock {
            $0.database = identity
            $0.databaseCheckedAt = clock.now
        }
        try adoptEpoch(onOpened: opened)
    }

    /// Closes the writer and the pooled readers; readers in use are closed when given back. The last close of
    /// a database deletes its `-wal` and `-shm` by name, which now belong to the new file, but SQLite skips the
    /// checkpoint and the deletion for a database unlinked or replaced since it opened (pager.c,
    /// `databaseIsUnmoved`), which `followingAReplacedDatabaseLeavesTheNewDatabasesWALAlone` checks. The
    /// buffered accesses name rows of the old file: dropped.
    func detachConnections(_ connection: inout SQLiteConnection?) {
        connection?.close()
        connection = nil
        let pooled = readers.withLock { pool -> [SQLiteConnection] in
            pool.generation += 1
            defer { pool.connections = [] }
            return pool.connections
        }
        for reader in pooled { reader.close() }
        state.withLock {
            $0.database = nil
            $0.recency = RecencyBuffer()
        }
    }

    /// Opens the store's folders again by path (the store folder may itself have been replaced).
    private func reopenFolders() throws {
        let (opened, _) = try SQLiteStoreFolders.open(
            layout: layout, storeName: storeName, protection: configuration.fileProtection)
        heldFolders.withLock { $0 = opened }
        reportMovedAside(opened)
    }

    /// Before an engine goes away: a database replaced since the last look must not lose its WAL to this
    /// instance's last close.
    func detachIfReplaced() {
        writer.withLock { connection in
            guard let held = state.withLock({ $0.database }) else { return }
            if databaseAtPath().map({ !$0.isSameFile(as: held) }) ?? true { detachConnections(&connection) }
        }
    }

    /// `body`'s result, its errors translated (``translatingErrors(_:)``), or `fallback` while the database
    /// is missing (nothing to read, remove or flush).
    func unlessGone<T>(_ fallback: @autoclosure () -> T, _ body: () throws -> T) throws -> T {
        do {
            return try translatingErrors(body)
        } catch is SQLiteDatabaseGone {
            return fallback()
        }
    }
}

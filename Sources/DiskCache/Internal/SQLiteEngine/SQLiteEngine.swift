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

/// The SQLite engine (issue 24; Docs/DiskCache.md, "Engines"; Docs/DiskFormat.md, "The SQLite engine"): each
/// record sealed into a row of one WAL database, `store.sqlite`; a record sealed larger than
/// ``DiskCacheConfiguration/Engine/sqliteRowLimit`` sealed into a file of its own under `large/`, found
/// through its row. The key epoch, the tag counters, the totals and the statistics live in the same
/// database and change in the same transactions as the rows, so they are exact and a wipe is one commit.
///
/// What it shares with the file engine: the master key and its loader, the key-check record `store.check`
/// (version 2 marks this engine), the record layout and the sealed-record kernel (one liveness rule, one
/// associated-data builder, bound here by `RecordBinding.storeRow`), the tag counters' naming and sealing,
/// per-key lock files under `locks/`, and temporary files under `tmp/`.
///
/// Thread safety: `Sendable`. One writer connection behind its own lock (every write is one `BEGIN
/// IMMEDIATE` transaction on it, so writes in this process queue there and other processes wait in SQLite's
/// busy handler); reader connections in a pool, each used by one thread at a time; the in-memory state (the
/// epoch in use, pending counters, the recency buffer, held-back events) behind a third lock held only for
/// in-memory work. Lock order: the writer, then the state; never a connection's lock inside the state's; the
/// observer is never called under any of them.
final class SQLiteEngine: StorageEngine {
    struct State {
        var epoch: Epoch
        var pending = StatisticsCounters()
        /// Last accesses noted by reads and not yet written.
        var recency = RecencyBuffer()
        /// When the recency buffer was last written (the engine's clock).
        var lastRecencyFlush: Date
        /// Write transactions this instance began: tests and benchmarks check that reads begin none.
        var writeTransactions = 0
        /// The last row serial handed out: a random start, then one more per write, so a serial costs no
        /// system call and two writers (in this process or another) practically never share one.
        var lastSerial = Int64.random(in: .min ... .max)
        /// The database file the connections use (as the writer found it at the path before opening it);
        /// `nil` while the database is missing from the path (SQLiteEngine+Following.swift).
        var database: FileStatus?
        /// When a read last compared it with the file at the path (the engine's clock).
        var databaseCheckedAt: Date
        /// When to truncate the WAL after this process's last write (SQLiteEngine+IdleCheckpoint.swift).
        var idle = SQLiteIdleCheckpoint(delay: SQLiteEngine.idleCheckpointDelay)
        /// What the idle checkpoint waits with; tests put one they drive in its place.
        var idleScheduler: any SQLiteIdleScheduler = DispatchIdleScheduler()
        /// Idle checkpoints run so far (for tests).
        var idleCheckpoints = 0
    }

    static let databaseName = "store.sqlite"
    static let largeFolderName = "large"
    /// How far apart two accesses of a row must be for the later one to be written back (1 s), and how
    /// often at most the recency buffer is written (with the next write transaction, or a trim).
    static let recencyResolution: Int64 = 1_000
    /// Past this many buffered accesses the next write transaction writes them whatever their age.
    static let recencyBufferLimit = 4_096
    /// Buffered accesses written per transaction. Each one moves the row's `entry_accessed` index entry, so
    /// a random set of accesses dirties up to about three pages apiece; 4,096 in one transaction put up to
    /// 5 MiB in the WAL at once, past its 4 MiB limit before any checkpoint could run (Docs/DiskEngine-SQLite.md,
    /// "Checkpoints").
    static let recencyWriteBatch = 128
    /// From this many frames (128 KiB of 4 KiB pages) the WAL is copied into the database when an instance
    /// that wrote closes (its connections do not checkpoint on close: SQLiteConnection.Options
    /// .checkpointsOnClose). Bounds what the next process to open the store reads to rebuild its WAL index
    /// (about 0.1 ms for 32 frames), while a short-lived process below it (a `strata get`, which commits its
    /// counters and access times in a few frames) copies no page and syncs nothing at exit, and the next one
    /// appends to the WAL instead of restarting it with a synced header.
    static let closingCheckpointFrames = 32
    /// Rows deleted per transaction by trims, sweeps and wipes: bounded so another process's write never
    /// waits long for the lock.
    static let batchSize = 256

    let configuration: DiskCacheConfiguration
    let layout: StoreLayout
    let databasePath: String
    let largeFolderPath: String
    let master: MasterKey
    let namer: KeyedNamer
    /// The tag counters' keys, derived at the first tag operation rather than at open (``tagCounters``).
    let heldTagCounters = Locked<TagCounters?>(nil)
    let files: AtomicFileWriter
    /// Opened again when the store folder is replaced or made again (SQLiteEngine+Following.swift).
    let heldFolders: Locked<SQLiteStoreFolders>
    let readOnlyCause: FileError?
    let state: Locked<State>
    // `nonisolated(unsafe)`: a connection is not `Sendable`, and the lock alone proves nothing for it. The
    // writer is used only inside `writer.withLock`, which never returns it or keeps it elsewhere; a reader is
    // taken out of the pool under `readers`' lock and used by that one thread until it is put back or closed.
    // So no connection is ever in two threads' hands.
    nonisolated(unsafe) let writer: Locked<SQLiteConnection?>
    nonisolated(unsafe) let readers = Locked(SQLiteReaderPool())
    let events: HeldEvents

    var clock: any CacheClock { configuration.clock }
    var storeName: String { configuration.name }
    var isReadOnly: Bool { readOnlyCause != nil }
    var folders: SQLiteStoreFolders { heldFolders.withLock { $0 } }

    /// Opens (creating if needed) the SQLite store `configuration` describes.
    ///
    /// - Parameters:
    ///   - configuration: The store's folder, limits, master-key source and clock.
    /// - Throws: What ``DiskCache/init(configuration:codec:)`` documents; `.unsupportedFormat` when the folder
    ///   holds a store of the file engine.
    /// - Complexity: A few small files and one database open; independent of the number of entries.
    ///   - migrating: `true` only for a migration from the file engine, which has checked the master key
    ///     against the folder's version 1 record and writes the version 2 record itself when it is done.
    init(configuration: DiskCacheConfiguration, migrating: Bool = false) throws {
        self.configuration = configuration
        events = HeldEvents(observer: configuration.observer)
        layout = StoreLayout(root: configuration.resolvedDirectory)
        databasePath = layout.root + "/" + Self.databaseName
        largeFolderPath = layout.root + "/" + Self.largeFolderName
        files = AtomicFileWriter(
            layout: layout, isDurable: configuration.durability == .fsync, recencyResolution: .infinity)
        let layout = self.layout
        try configuration.validate()
        let loaded = try DiskStore.translatingErrors {
            try MasterKeyLoader.load(
                configuration.masterKeySource, storeName: configuration.name,
                protection: { [protection = configuration.fileProtection] in
                    try DataProtection.apply(protection, descriptor: $0, path: $1)
                },
                refusingCreation: { layout.missingKeyFileError(keyFilePath: $0) })
        }
        master = loaded.key
        do {
            namer = try DiskStore.translatingErrors {
                try KeyedNamer(
                    namingSubkey: try StoreSubkeys.namingSubkey(master: loaded.key, epochSalt: DiskStore.namingSalt))
            }
            let (opened, readOnlyCause) = try SQLiteStoreFolders.open(
                layout: layout, storeName: configuration.name, protection: configuration.fileProtection)
            (heldFolders, self.readOnlyCause) = (Locked(opened), readOnlyCause)
            // The database's epoch is adopted by openDatabase() below, before anything seals or opens a record.
            state = Locked(
                State(
                    epoch: .unadopted, lastRecencyFlush: configuration.clock.now,
                    databaseCheckedAt: configuration.clock.now))
            writer = Locked(nil)
            reportMovedAside(opened)
            try DiskStore.translatingErrors {
                if !migrating { try checkKey() }
                try openDatabase()
                if !isReadOnly {
                    let removed = files.removeStaleFiles(in: folders.temporary)
                    if removed > 0 {
                        report(
                            .staleFilesRemoved, "removed \(removed) temporary file(s) left by an interrupted write",
                            path: layout.temporaryFolder, error: nil)
                    }
                    if !migrating { removeMigrationLeftovers() }
                }
            }
        } catch {
            if let created = loaded.createdKeyFile, !layout.holdsStore { unlink(created) }
            throw error
        }
    }

    deinit {
        try? flushStatistics()
        try? flushRecency()
        checkpointIfWALIsLarge()
        detachIfReplaced()
    }

    // MARK: - Errors and events

    /// The error for a change refused because the store was opened read-only.
    func requireWritable(_ operation: String) throws {
        guard let readOnlyCause else { return }
        let reason =
            readOnlyCause.errno == EROFS ? "it is on a read-only file system" : "this process may not modify it"
        throw CacheError(
            .readOnly,
            "cannot \(operation) in store '\(storeName)': \(reason), so it was opened read-only; reads still work. "
                + "Nothing was changed", path: layout.root, cause: readOnlyCause.cacheError)
    }

    func report(_ kind: CacheEvent.Kind, _ message: String, path: String?, error: (any Error)?) {
        guard configuration.observer != nil else { return }
        let error = (error as? FileError)?.cacheError ?? (error as? SQLiteError)?.cacheError ?? error
        events.deliver(CacheEvent(kind, "store '\(storeName)': \(message)", path: path, error: error))
    }

    /// Reports the foreign items opening `folders` moved aside.
    func reportMovedAside(_ folders: SQLiteStoreFolders) {
        for (from, to) in folders.movedAside {
            report(
                .corruptEntryRemoved,
                "an item the store did not create sat at \(from); it was moved, untouched and not followed, to "
                    + "\(to) (delete it when you have looked)", path: from, error: nil)
        }
    }

    func deferringEvents<T>(_ body: () throws -> T) rethrows -> T {
        try events.holding(body)
    }

    func count(_ update: (inout StatisticsCounters) -> Void) {
        state.withLock { update(&$0.pending) }
    }

    /// Runs `body`, turning internal failures (SQLite's, the file system's, the back end's) into `CacheError`s.
    func translatingErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as SQLiteError {
            throw error.cacheError
        } catch let gone as SQLiteDatabaseGone {
            throw gone
        } catch {
            return try DiskStore.translatingErrors { throw error }
        }
    }

    // MARK: - Coordination

    func withKeyLock<R>(keyBytes: Data, wait: Bool, _ body: () throws -> R) throws -> R? {
        try requireWritable("take a key's lock")
        let lock = try translatingErrors {
            try FileLock.acquire(try namer.hexName(of: keyBytes) + ".lock", in: folders.locks, wait: wait)
        }
        guard let lock else { return nil }
        defer { lock.unlock() }
        return try body()
    }

    /// The tag counters, their keys derived on first use: opening a store and reading an untagged entry (a
    /// `strata get`) need none, and deriving them cost two HKDF computations and an HMAC key set-up at every
    /// open (Docs/Performance.md).
    ///
    /// - Throws: `CacheError` `.crypto` when the back end fails to derive them (then again at the next use).
    var tagCounters: TagCounters {
        get throws {
            try heldTagCounters.withLock { held in
                if let held { return held }
                let made = try DiskStore.translatingErrors { try TagCounters(master: master) }
                held = made
                return made
            }
        }
    }

    func lowWater(_ limit: Int) -> Int {
        StoreAccounting.Limits.lowWater(limit, configuration.lowWaterFraction)
    }
}

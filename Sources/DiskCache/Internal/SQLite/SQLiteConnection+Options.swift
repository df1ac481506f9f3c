extension SQLiteConnection {
    /// How a connection is opened and which pragmas it sets (Docs/DiskEngine-SQLite.md, "Pragmas").
    ///
    /// The defaults are the engine's: WAL, `synchronous=NORMAL`, a 5 s busy timeout, a 4 MiB bound on the
    /// WAL left after a checkpoint, no memory map, a persistent WAL.
    struct Options: Sendable {
        /// SQLite's `synchronous` setting in WAL mode.
        enum Synchronous: String, Sendable {
            /// Sync at checkpoints only: always consistent, may lose the last commits on power loss
            /// (`DurabilityMode.none`).
            case normal = "NORMAL"
            /// Sync the WAL at every commit (`DurabilityMode.fsync`).
            case full = "FULL"
        }

        /// Opens read-only: no pragma that writes is set and every write fails with
        /// ``SQLiteError/Kind/readOnly``.
        var readOnly = false
        /// Creates the database when it does not exist (ignored when ``readOnly``).
        var createIfMissing = true
        /// How long a statement waits in total for a lock held by another connection, in milliseconds,
        /// before failing with ``SQLiteError/Kind/busy``.
        var busyTimeoutMilliseconds = 5_000
        /// `PRAGMA synchronous`.
        var synchronous = Synchronous.normal
        /// `PRAGMA fullfsync` and `PRAGMA checkpoint_fullfsync`: on Apple platforms a sync then reaches the
        /// media (`F_FULLFSYNC`); SQLite ignores both elsewhere. Set it with ``Synchronous/full``.
        var fullFsync = false
        /// `PRAGMA journal_size_limit`, in bytes: the WAL is truncated to this size when a checkpoint resets
        /// it, so one burst does not leave a large file behind. 4 MiB is the WAL of the default
        /// auto-checkpoint (1,000 pages of 4 KiB).
        var journalSizeLimit: Int64 = 4 << 20
        /// `PRAGMA mmap_size`, in bytes; 0 reads through `pread`. A memory map is faster for gets but turns a
        /// database truncated by another process into `SIGBUS` (sqlite.org/mmap.html), which a store in a
        /// folder others can write must not risk; measured in Docs/DiskEngine-SQLite.md.
        var mmapSize: Int64 = 0
        /// `PRAGMA cache_size` as a bound in KiB: how much of the database one connection keeps in its own
        /// page cache. SQLite's default (2,000 KiB) is smaller than the pages of 10,000 small entries and
        /// their index, so a get paid one `pread` per page it missed; 32 MiB is python-diskcache's bound (8,192
        /// pages of 4 KiB). Memory is taken only as pages are read.
        var cacheSizeKiB = 32 << 10
        /// `PRAGMA page_size` for a new database, in bytes (a power of two from 512 to 65,536); `nil` keeps
        /// SQLite's 4,096. Ignored for an existing database (WAL fixes the page size).
        var pageSize: Int? = nil
        /// Keeps the `-wal` and `-shm` files when the last connection closes (`SQLITE_FCNTL_PERSIST_WAL`), so
        /// the store can still be opened on read-only media: SQLite cannot open a WAL database there without
        /// them (`SQLITE_CANTOPEN`, measured). The WAL is still truncated to ``journalSizeLimit``.
        var persistentWAL = true
        /// Whether closing the process's last connection copies the WAL into the database (SQLite's default).
        /// `false` leaves that to the engine (Docs/DiskEngine-SQLite.md, "Checkpoints"): a short-lived process
        /// then neither copies nor syncs at exit, and the next one appends to the WAL instead of restarting it
        /// with a synced header. Linux only: Apple's SQLite3 module cannot call the variadic
        /// `sqlite3_db_config`, so there every last close still checkpoints.
        var checkpointsOnClose = true
        /// WAL frames after which a commit of this connection checkpoints passively (``SQLiteWALGuard``; SQLite's
        /// automatic checkpoint, which the hook replaces, uses 1,000); 0 installs no hook and leaves SQLite's.
        var walCheckpointPages = 1_000
        /// How long a commit that left the WAL past ``journalSizeLimit`` waits for other connections' readers
        /// so it can truncate the WAL, in milliseconds (the first such commit, and again the first past each
        /// further multiple of the limit; the others until the WAL is back under the limit only try).
        var walRestartWaitMilliseconds = 20
        /// How many prepared statements the connection keeps for reuse.
        var statementCacheCapacity = 32
        /// Called before each wait for a lock from the open on (``SQLiteConnection/onBusyWait``). For tests.
        var onBusyWait: (@Sendable (Int) -> Void)? = nil

        /// The defaults.
        init() {}

        /// The pragmas to run after opening, in order: the page size must precede WAL, which fixes it.
        var pragmas: [String] {
            // trusted_schema=OFF: a hostile database file's triggers and views may not call functions with
            // side effects (sqlite.org/pragma.html#pragma_trusted_schema, 3.31+).
            var pragmas = ["PRAGMA trusted_schema=OFF"]
            // A negative cache_size is a bound in KiB, not a page count (sqlite.org/pragma.html#pragma_cache_size).
            pragmas.append("PRAGMA cache_size=-\(cacheSizeKiB)")
            if readOnly { return pragmas + ["PRAGMA mmap_size=\(mmapSize)"] }
            if let pageSize { pragmas.append("PRAGMA page_size=\(pageSize)") }
            pragmas += [
                "PRAGMA journal_mode=WAL",
                "PRAGMA synchronous=\(synchronous.rawValue)",
                "PRAGMA journal_size_limit=\(journalSizeLimit)",
                "PRAGMA mmap_size=\(mmapSize)",
            ]
            if fullFsync { pragmas += ["PRAGMA fullfsync=ON", "PRAGMA checkpoint_fullfsync=ON"] }
            return pragmas
        }
    }
}

extension DiskCacheConfiguration {
    /// The storage engine under a ``DiskCache``: how its sealed entries are laid out in the store's folder
    /// (Docs/DiskCache.md, "Engines"; Docs/DiskFormat.md describes both byte for byte).
    ///
    /// A store records its engine in its folder (the version of its key-check record, `store.check`) when
    /// it is created, and every later open reads it from there; it is never guessed from this option. A
    /// build that does not know a store's engine refuses to open it with ``CacheError/Code/unsupportedFormat``
    /// instead of reading it as empty.
    ///
    /// A plain value; thread-safe.
    public enum Engine: Sendable, Hashable, CaseIterable {
        /// Opens an existing store with the engine it was created with (a file store stays one until it is
        /// migrated, see ``DiskCacheConfiguration/migrateStoreToSQLite(progress:)``); creates a new store with
        /// ``sqlite``.
        case automatic
        /// One AES-256-GCM file per entry under `entries/`, named by the key's keyed hash.
        case files
        /// A SQLite database (the system SQLite, WAL journal) holding each entry sealed in a row, with
        /// values sealed larger than ``sqliteRowLimit`` in files of their own under `large/`.
        case sqlite

        /// The largest sealed entry (header, nonce, key, value and tag) the SQLite engine keeps in its row,
        /// in bytes; a larger one goes to a file, found through its row.
        public static let sqliteRowLimit = 32 << 10
    }
}

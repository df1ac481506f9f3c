import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DiskCacheConfiguration {
    /// Moves the store this configuration names from the file engine to the SQLite engine, in place, keeping
    /// every live entry (its value, expiry, stale window, cost and tags; recency starts afresh).
    ///
    /// The database fills beside the entry files while the folder is still a file store; one rename of the
    /// key-check record then makes it a SQLite store, and the files are deleted. Interrupted at any point (a
    /// crash, `kill -9`, a full disk), the folder is either the file store, whole, or the SQLite store, whole;
    /// calling this again resumes, skipping entries an earlier run already copied. Run it while no other
    /// process uses the store: a write another process makes to the file store meanwhile may be lost.
    ///
    /// ```swift
    /// let configuration = DiskCacheConfiguration(name: "thumbnails")
    /// let moved = try configuration.migrateStoreToSQLite()
    /// let cache = try DiskCache<String, Data>(configuration: configuration)   // now on SQLite
    /// ```
    ///
    /// - Parameter progress: Called with (entries read, entries found) on the caller's thread.
    /// - Returns: The number of entries the SQLite store holds; 0 when the store already used SQLite and
    ///   there was nothing to move.
    /// - Throws: `CacheError` `.invalidArgument` when the folder holds no store; what opening either engine
    ///   throws (`.wrongMasterKey`, `.readOnly`, …); the failure that stopped the copy (the folder is then still
    ///   the file store, and a later call resumes).
    /// - Complexity: O(*n*) reads, decryptions and writes for *n* entries; the file I/O runs on the caller's
    ///   thread.
    public func migrateStoreToSQLite(progress: ((Int, Int) -> Void)? = nil) throws -> Int {
        let layout = StoreLayout(root: resolvedDirectory)
        guard EngineSelection.recordedEngine(in: layout) == .files else { return try migrate(progress: progress) }
        // One migration at a time: a second one waits here, then reads store.check again and finds the store
        // moved. A lock file of its own, not store.lock, which the file engine takes itself during the copy
        // (its statistics flush) and which flock would refuse to a second descriptor of this process. The
        // commit deletes it; a waiter then holds the lock of a deleted file, which is still one lock.
        let lock = try DiskStore.translatingErrors { () throws -> FileLock? in
            try FileLock.acquire(
                SQLiteEngine.migrationLockName, in: try Directory.open(path: layout.root), wait: true)
        }
        defer { lock?.unlock() }
        return try migrate(progress: progress)
    }

    private func migrate(progress: ((Int, Int) -> Void)?) throws -> Int {
        switch EngineSelection.recordedEngine(in: StoreLayout(root: resolvedDirectory)) {
        case .sqlite:
            return 0
        case .none, .unreadable:
            throw CacheError(
                .invalidArgument,
                "\(resolvedDirectory.path) holds no Strata store (no store.check); nothing to migrate",
                path: resolvedDirectory.path)
        case .files:
            var configuration = self
            // Limits are the SQLite store's to apply once it is in use: a migration moves everything it finds.
            configuration.byteLimit = nil
            configuration.countLimit = nil
            configuration.engine = .files
            let files = try FileEngine(configuration: configuration)
            configuration.engine = .sqlite
            let database = try SQLiteEngine(configuration: configuration, migrating: true)
            let count = try database.copyEntries(from: files, progress: progress)
            try database.commitMigration()
            return count
        }
    }
}

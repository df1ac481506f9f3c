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

/// The folders of a SQLite store, held open: the store folder, `tmp/` for files on their way into place,
/// `large/` for values too large for a row, `locks/` for per-key locks.
///
/// Each is opened without following a link (Directory.swift), so a link planted at a folder's name is
/// refused, never followed.
///
/// Thread safety: immutable after opening; a `Directory` may be used from any thread.
struct SQLiteStoreFolders: Sendable {
    let root: Directory
    let temporary: Directory
    let large: Directory
    let locks: Directory
    /// Foreign items found where a folder belongs and moved to `quarantine/`: (where it was, where it is now),
    /// for the engine to report.
    var movedAside: [(from: String, to: String)] = []

    /// Creates (or opens) the folders and gives them the Data Protection class `protection` (Apple platforms;
    /// DataProtection.swift). When the file system refuses to create them (`EROFS`, `EACCES`, `EPERM`) and
    /// the store already exists, opens what is there read-only, and leaves its classes as they are.
    ///
    /// A file takes the class of the folder it is created in, so the folders' class reaches everything the
    /// engine or SQLite creates in them afterwards: the `-wal` and `-shm` SQLite makes beside the database
    /// (and makes again after a quarantine or a deletion from outside), the key-check record and large-value
    /// files written in `tmp/` and renamed into place (a rename keeps the class), the lock files.
    ///
    /// - Parameters:
    ///   - layout: The store's paths.
    ///   - storeName: The store's name, for messages.
    ///   - protection: The class for the folders (`DiskCacheConfiguration.fileProtection`).
    /// - Returns: The folders, and the reason the store is read-only (`nil` when it is writable).
    /// - Throws: `CacheError` for a folder that cannot be created or opened or given its class, or a read-only
    ///   store that does not exist yet.
    static func open(
        layout: StoreLayout, storeName: String, protection: DiskCacheConfiguration.FileProtection
    ) throws -> (SQLiteStoreFolders, FileError?) {
        try DiskStore.translatingErrors {
            do {
                try FileSystem.makeDirectories(layout.root)
                let root = try Directory.open(path: layout.root)
                for name in [StoreLayout.temporaryName, SQLiteEngine.largeFolderName, StoreLayout.locksName] {
                    try root.makeDirectory(name)
                }
                var moved: [(from: String, to: String)] = []
                var folders = SQLiteStoreFolders(
                    root: root, temporary: try owned(StoreLayout.temporaryName, in: root, moved: &moved),
                    large: try owned(SQLiteEngine.largeFolderName, in: root, moved: &moved),
                    locks: try owned(StoreLayout.locksName, in: root, moved: &moved))
                folders.movedAside = moved
                // Every folder of an existing store is already there, so creating them proved nothing: ask.
                if access(layout.root, W_OK) != 0, DiskStore.isWriteRefusal(errno), layout.holdsStore {
                    return (folders, FileError(errno: errno, operation: "cannot write", path: layout.root))
                }
                // Only on a store this process may change (above: a read-only volume refuses the class too).
                // On the descriptors just opened without following links, not by path: a folder swapped for a
                // link since must not pass the class to whatever the link points at (DataProtection.swift).
                try DataProtection.apply(protection, to: [root, folders.temporary, folders.large, folders.locks])
                return (folders, nil)
            } catch let error as FileError where DiskStore.isWriteRefusal(error.errno) {
                // Reading needs the key-check record and the database; without them there is no store to read.
                guard layout.holdsStore, let root = try? Directory.open(path: layout.root),
                    let large = try? root.directory(SQLiteEngine.largeFolderName)
                else { throw error }
                let temporary = (try? root.directory(StoreLayout.temporaryName)) ?? large
                let locks = (try? root.directory(StoreLayout.locksName)) ?? large
                return (
                    SQLiteStoreFolders(root: root, temporary: temporary, large: large, locks: locks),
                    error
                )
            }
        }
    }

    /// Opens the folder `name` in `root`; a link, file or FIFO in its place is moved whole (never followed)
    /// into `quarantine/`, as the file engine does, and a fresh folder made.
    private static func owned(
        _ name: String, in root: Directory, moved: inout [(from: String, to: String)]
    ) throws -> Directory {
        let opened: Result<Directory, FileError> = Result { () throws(FileError) in try root.directory(name) }
        guard case .failure(let error) = opened, error.isForeignItem else { return try opened.get() }
        try root.makeDirectory(StoreLayout.quarantineName)
        let quarantine = try root.directory(StoreLayout.quarantineName)
        let aside = name + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        try root.rename(name, to: quarantine, as: aside)
        moved.append((root.path + "/" + name, quarantine.path + "/" + aside))
        try root.makeDirectory(name)
        return try root.directory(name)
    }
}

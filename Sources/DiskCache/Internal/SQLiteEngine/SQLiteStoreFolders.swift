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

    /// Creates (or opens) the folders. When the file system refuses to create them (`EROFS`, `EACCES`,
    /// `EPERM`) and the store already exists, opens what is there read-only.
    ///
    /// - Returns: The folders, and the reason the store is read-only (`nil` when it is writable).
    /// - Throws: `CacheError` for a folder that cannot be created or opened, or a read-only store that does
    ///   not exist yet.
    static func open(layout: StoreLayout, storeName: String) throws -> (SQLiteStoreFolders, CacheError?) {
        try DiskStore.translatingErrors {
            do {
                try FileSystem.makeDirectories(layout.root)
                let root = try Directory.open(path: layout.root)
                for name in [StoreLayout.temporaryName, SQLiteEngine.largeFolderName, StoreLayout.locksName] {
                    try root.makeDirectory(name)
                }
                return (
                    SQLiteStoreFolders(
                        root: root, temporary: try root.directory(StoreLayout.temporaryName),
                        large: try root.directory(SQLiteEngine.largeFolderName),
                        locks: try root.directory(StoreLayout.locksName)),
                    nil
                )
            } catch let error as FileError where DiskStore.isWriteRefusal(error.errno) {
                // Reading needs the key-check record and the database; without them there is no store to read.
                guard layout.holdsStore, let root = try? Directory.open(path: layout.root),
                    let large = try? root.directory(SQLiteEngine.largeFolderName)
                else { throw error }
                let temporary = (try? root.directory(StoreLayout.temporaryName)) ?? large
                let locks = (try? root.directory(StoreLayout.locksName)) ?? large
                return (
                    SQLiteStoreFolders(root: root, temporary: temporary, large: large, locks: locks),
                    error.cacheError
                )
            }
        }
    }
}

import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Opening the store's folders without following links (Docs/Security.md, "A hostile store folder"). The
// store folder's own path is the user's choice and may be or contain a symbolic link; below it nothing is
// followed. Something other than a folder where one of the store's folders belongs (a link, a file, a
// FIFO) is a foreign item: it is moved, whole and untouched, into `quarantine/`, reported, and a fresh
// folder takes its place. It is never traversed and never deleted.
extension DiskStore {
    /// The store's folders, opened (and, unless the store is read-only, created) on first need.
    ///
    /// - Throws: `FileError` when the store folder does not exist or cannot be opened.
    func folders() throws -> StoreFolders {
        if let held = state.withLock({ $0.folders }) { return held }
        return try openStoreFolders(creating: !isReadOnly)
    }

    /// Drops the held folders and opens them again: after the store folder, or one of its folders, was
    /// deleted or replaced from outside.
    @discardableResult
    func reopenFolders(creating: Bool) throws -> StoreFolders {
        state.withLock { $0.folders = nil }
        return try openStoreFolders(creating: creating && !isReadOnly)
    }

    /// Opens the store folder by its path and its folders below it by descriptor, creating what is
    /// missing when `creating` is set, and holds them for later operations.
    func openStoreFolders(creating: Bool) throws -> StoreFolders {
        if creating { try FileSystem.makeDirectories(layout.root) }
        let root = try Directory.open(path: layout.root)
        let entries = try ownedFolder(StoreLayout.entriesName, in: root, root: root, creating: creating)
        let temporary = try ownedFolder(StoreLayout.temporaryName, in: root, root: root, creating: creating)
        let folders = StoreFolders(root: root, entries: entries, temporary: temporary)
        state.withLock { $0.folders = folders }
        return folders
    }

    /// Opens the folder `name` in `parent` without following a link. When `creating`, a missing folder
    /// is created and a foreign item in its place is moved aside first.
    func ownedFolder(_ name: String, in parent: Directory, root: Directory, creating: Bool) throws -> Directory {
        let failure: FileError
        switch Result(catching: { () throws(FileError) -> Directory in try parent.directory(name) }) {
        case .success(let folder): return folder
        case .failure(let error): failure = error
        }
        guard creating, failure.isNotFound || failure.isForeignItem else { throw failure }
        if failure.isForeignItem { try moveAside(name, in: parent, root: root) }
        try parent.makeDirectory(name)
        return try parent.directory(name)
    }

    /// The fan-out folder `entries/<xx>` for the entry file `name`.
    func fanOutFolder(for name: String, in folders: StoreFolders, creating: Bool) throws -> Directory {
        let prefix = String(name.prefix(2))
        guard creating else { return try folders.entries.directory(prefix) }
        return try ownedFolder(prefix, in: folders.entries, root: folders.root, creating: true)
    }

    /// The per-key locks folder `locks/`, created when missing.
    func locksFolder(in folders: StoreFolders) throws -> Directory {
        try ownedFolder(StoreLayout.locksName, in: folders.root, root: folders.root, creating: !isReadOnly)
    }

    /// Moves the foreign item `name` in `parent` into `quarantine/` (or, for a foreign item at
    /// `quarantine` itself, to `quarantine-<random>` beside it) and reports it. Never follows it.
    ///
    /// - Throws: `CacheError` when it cannot be moved.
    func moveAside(_ name: String, in parent: Directory, root: Directory) throws {
        let suffix = "-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        let destination: Directory
        let isQuarantine = parent === root && name == StoreLayout.quarantineName
        do {
            destination =
                isQuarantine
                ? root : try ownedFolder(StoreLayout.quarantineName, in: root, root: root, creating: true)
            try parent.rename(name, to: destination, as: name + suffix)
        } catch let error as FileError where error.isNotFound {
            return  // another thread or process moved it first
        } catch let error as FileError {
            throw CacheError.posix(
                error.errno,
                "store '\(storeName)': an item the store did not create sits where its folder or file belongs and "
                    + "cannot be moved aside; move or delete it by hand", path: parent.path + "/" + name)
        }
        report(
            .corruptEntryRemoved,
            "an item the store did not create (not a folder the store made) sat at \(parent.path)/\(name); it was "
                + "moved, untouched and not followed, to \(destination.path)/\(name + suffix) (delete it when you "
                + "have looked)", path: parent.path + "/" + name)
    }
}

// The store folder, its folders and `store.lock`, as the store opens or re-creates them.
extension DiskStore {
    /// Creates (or opens) the store folder, its folders and the store lock file, moving foreign items
    /// in their places aside (DiskStore+Folders.swift), holds the folders open, and gives the folders the
    /// configured Data Protection class (Apple platforms; DataProtection.swift), also when they are made again
    /// after a deletion from outside.
    func createFolders() throws {
        let folders = try reopenFolders(creating: true)
        let locks = try locksFolder(in: folders)
        // The store lock file exists whenever the store does, so a flush can tell a deleted store.
        // On a read-only volume this open fails with EROFS, which is what switches the store to read-only
        // mode (DiskStore+Access.swift); skipping it when the file exists would hide that.
        release(try storeLock(in: folders, wait: false, creating: true))
        // On the descriptors just opened without following links, not on the paths: a folder swapped for a
        // link since must not pass the class to whatever the link points at (DataProtection.swift).
        try DataProtection.apply(
            configuration.fileProtection, to: [folders.root, folders.entries, folders.temporary, locks])
    }

    /// Takes `store.lock`; a foreign item at its name is moved aside and a fresh lock file made when
    /// `creating`. Give a lock it returns back with ``release(_:)``, never `unlock()`, so that the events
    /// reported meanwhile reach the observer.
    func storeLock(in folders: StoreFolders, wait: Bool = true, creating: Bool = true) throws -> FileLock? {
        let lock: FileLock?
        do {
            lock = try FileLock.acquire(StoreLayout.storeLockName, in: folders.root, wait: wait, creating: creating)
        } catch  where creating && (error.isForeignItem || error.detail != nil) {
            try moveAside(StoreLayout.storeLockName, in: folders.root, root: folders.root)
            lock = try FileLock.acquire(StoreLayout.storeLockName, in: folders.root, wait: wait, creating: true)
        } catch {
            throw error
        }
        if lock != nil { events.beginHold() }
        return lock
    }
}

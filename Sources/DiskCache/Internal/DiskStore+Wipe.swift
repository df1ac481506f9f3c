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

extension DiskStore {
    /// Starts a new key epoch (a new salt in `store.check`, written with a rename under `store.lock`),
    /// then deletes every entry file. Files that survive an interrupted wipe carry the old epoch id and
    /// can no longer be decrypted; reads and sweeps remove them.
    ///
    /// Foreign directories where entry files belong are moved to `quarantine/` (see
    /// DiskStore+ForeignItems.swift). An item that can be neither deleted nor moved does not stop the
    /// wipe: the rest is deleted and the call then throws, naming how many are left.
    ///
    /// On a full disk (`ENOSPC`, `EDQUOT`) the new record cannot be written before anything is freed, so
    /// the order flips: entry files are deleted first, still under `store.lock`, then the record is
    /// written again, then the folder is swept once more for entries written meanwhile. A crash between
    /// the two steps leaves a subset of the old entries, each still whole and authenticated: exactly what
    /// a crash before the wipe began would leave, minus some entries; never a wrong value. When even the
    /// second attempt finds no room, the entries are gone but the epoch stays; that is reported to the
    /// observer and the call succeeds, since every entry it was asked to remove was removed.
    ///
    /// - Parameters:
    ///   - deletingEntries: `false` only in tests that simulate an interrupted wipe.
    ///   - progress: Called with (entry files deleted, entry files found) while they are deleted.
    /// - Throws: `CacheError` `.readOnly` for a store opened read-only; the record's write error (nothing
    ///   changed); or, after the new epoch is in place, the first failure among the items left behind.
    func removeAll(deletingEntries: Bool = true, progress: ((Int, Int) -> Void)? = nil) throws {
        try translatingErrors {
            try requireWritable("remove all entries")
            try createFolders()
            let folders = try folders()
            let lock = try storeLock(in: folders)
            defer { release(lock) }
            // Every name changes: no write may put a file in place (and count it) between the index reset
            // and the deletion (DiskStore+NameLocks.swift).
            try withAllNameLocks {
                try wipe(folders: folders, deletingEntries: deletingEntries, progress: progress)
            }
        }
    }

    private func wipe(folders: StoreFolders, deletingEntries: Bool, progress: ((Int, Int) -> Void)?) throws {
        let (salt, record) = try generations.makeRecord()
        do {
            try writeAtomically(
                record, in: folders.root, name: StoreLayout.checkRecordName, modified: nil, replacing: true)
        } catch let error as FileError where Self.isOutOfSpace(error) && deletingEntries {
            let early = deleteEntryFiles(in: folders, progress: progress)
            accounting.resetIndex(to: nil)
            do {
                try writeAtomically(
                    record, in: folders.root, name: StoreLayout.checkRecordName, modified: nil, replacing: true)
            } catch let retry as FileError where Self.isOutOfSpace(retry) {
                try throwIfIncomplete(early, epochChanged: false)
                report(
                    .maintenanceFailed,
                    "the disk is full: every entry file was deleted, but the new key-check record could not be "
                        + "written, so the store keeps its key epoch", path: layout.checkRecord, error: retry)
                return
            }
        }
        let epoch = try generations.epoch(salt: salt)
        let status = try folders.root.status(StoreLayout.checkRecordName)
        // The epoch first, then the index: every name's stripe is held, so no write can put a file in place
        // and count it between the two (KeyGenerations.swift).
        generations.adopt(epoch, status: status)
        accounting.resetIndex(to: deletingEntries ? StoreIndex() : nil)
        guard deletingEntries else { return }
        try throwIfIncomplete(deleteEntryFiles(in: folders, progress: progress), epochChanged: true)
    }

    private static func isOutOfSpace(_ error: FileError) -> Bool {
        error.errno == ENOSPC || error.errno == EDQUOT
    }

    /// Deletes every file in the fan-out folders, moving foreign directories aside; carries on past
    /// failures. Every folder is opened relative to `entries/` without following a link: a link (or any
    /// non-folder) where a fan-out folder belongs is moved aside whole, never listed or deleted through.
    ///
    /// With `progress`, the fan-out folders are counted in a first pass (each opened, listed and closed in
    /// turn: holding all of them open at once could pass a low descriptor limit), so a total can be given.
    ///
    /// - Parameter progress: Called with (files done, files found) once they are counted and after each file.
    /// - Returns: The paths that could not be deleted or listed, with their errors.
    /// - Complexity: O(*n*) file-system calls for *n* files (twice the listing with `progress`).
    private func deleteEntryFiles(
        in folders: StoreFolders, progress: ((Int, Int) -> Void)? = nil
    ) -> [(path: String, error: any Error)] {
        var failures: [(path: String, error: any Error)] = []
        var items: [(String, FileStatus)] = []
        do {
            try folders.entries.forEach { items.append(($0, $1)) }
        } catch {
            return [(layout.entriesFolder, error)]
        }
        let total = progress == nil ? 0 : countEntryFiles(items, in: folders)
        var done = 0
        progress?(0, total)
        for (prefix, status) in items {
            let folderPath = layout.entriesFolder + "/" + prefix
            let folder: Directory
            do {
                guard status.isDirectory else { throw FileError(errno: ENOTDIR, operation: "", path: folderPath) }
                folder = try folders.entries.directory(prefix)
            } catch let error as FileError where error.isForeignItem {
                // Not a folder the store made: move it aside (a fan-out name) or leave it (any other name).
                guard prefix.utf8.count == 2 else { continue }
                do {
                    try moveAside(prefix, in: folders.entries, root: folders.root)
                } catch {
                    failures.append((folderPath, error))
                }
                continue
            } catch {
                if !FileError.isNotFound(error) { failures.append((folderPath, error)) }
                continue
            }
            var names: [String] = []
            do {
                try folder.forEach { name, _ in names.append(name) }
            } catch {
                failures.append((folderPath, error))
                continue
            }
            for name in names {
                defer {
                    done += 1
                    // A file written between the count and now (only before the name locks) grows the total.
                    progress?(done, max(done, total))
                }
                do {
                    try folder.unlink(name)
                } catch {
                    do {
                        if try !quarantineIfDirectory(name, in: folder) {
                            failures.append((folderPath + "/" + name, error))
                        }
                    } catch let quarantineError {
                        failures.append((folderPath + "/" + name, quarantineError))
                    }
                }
            }
        }
        return failures
    }

    /// How many files the fan-out folders among `items` hold now; folders that cannot be opened count 0.
    private func countEntryFiles(_ items: [(String, FileStatus)], in folders: StoreFolders) -> Int {
        var count = 0
        for (prefix, status) in items where status.isDirectory {
            guard let folder = try? folders.entries.directory(prefix) else { continue }
            try? folder.forEach { _, _ in count += 1 }
        }
        return count
    }

    /// Throws one error summing up `failures`, if any, saying whether earlier entries are still readable.
    private func throwIfIncomplete(_ failures: [(path: String, error: any Error)], epochChanged: Bool) throws {
        guard let first = failures.first else { return }
        // The user-facing sentence names the path and the system's words, never an internal type's dump.
        let cause: CacheError
        switch first.error {
        case let error as CacheError: cause = error
        case let error as FileError: cause = error.cacheError
        default:
            // `localizedDescription` is Foundation proper's, not FoundationEssentials'; Apple platforms keep it.
            #if canImport(FoundationEssentials)
            let text = String(describing: first.error)
            #else
            let text = first.error.localizedDescription
            #endif
            cause = CacheError(.io, text, path: first.path, cause: first.error)
        }
        let code = cause.code
        let state =
            epochChanged
            ? "a new key epoch is in place, so none of them can be read any more"
            : "the key epoch could not be renewed (the disk is full), so they can still be read"
        throw CacheError(
            code,
            "store '\(storeName)': removeAll deleted what it could, but \(failures.count) item(s) under "
                + "\(layout.entriesFolder) could not be removed; \(state). Remove them by hand. First: "
                + "\(first.path): \(cause.message)",
            path: first.path, cause: cause.cause ?? cause)
    }
}

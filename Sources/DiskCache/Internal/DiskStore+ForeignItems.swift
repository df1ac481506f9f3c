import CacheCore
import Foundation

// Something the store did not write can sit where an entry file belongs: a directory made by hand or
// by another program. `rename(2)` cannot replace it and `unlink(2)` cannot remove it, so every write,
// removal and wipe of that entry would fail forever. The store moves such a directory, whole, into
// `quarantine/` and carries on. It never deletes it: the store did not make it, so it may hold
// someone's data; inspecting and deleting `quarantine/` is left to the user.
extension DiskStore {
    /// Moves a directory at `path` into `quarantine/` and reports it to the observer.
    ///
    /// - Returns: `true` when `path` is free now (the directory was moved aside, or nothing is there any
    ///   more), `false` when something other than a directory is there (the caller's error stands).
    /// - Throws: `CacheError` when the directory cannot be moved (for example on another file system).
    func quarantineIfDirectory(_ path: String) throws -> Bool {
        var info = stat()
        guard lstat(path, &info) == 0 else { return errno == ENOENT }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { return false }
        let name = (path as NSString).lastPathComponent
        let destination =
            layout.quarantineFolder + "/" + name + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        do {
            try FileSystem.makeDirectory(layout.quarantineFolder)
            try FileSystem.renameFile(path, to: destination)
        } catch  where error.isNotFound && lstat(path, &info) != 0 {
            // Another thread or process moved or removed it first.
            return true
        } catch {
            throw CacheError.posix(
                error.errno,
                "store '\(storeName)': a directory the store did not create sits where an entry file belongs and "
                    + "cannot be moved aside to \(layout.quarantineFolder); move or delete it by hand",
                path: path)
        }
        report(
            .corruptEntryRemoved,
            "a directory the store did not create sat where an entry file belongs; it was moved, untouched, to "
                + "\(destination) so the entry can be written and removed again (delete it when you have looked)",
            path: path)
        return true
    }
}

extension StoreLayout {
    /// Foreign directories found where entry files belong, moved aside whole (never deleted by the store).
    var quarantineFolder: String { root + "/quarantine" }
}

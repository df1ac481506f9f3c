import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Something the store did not write can sit where an entry file belongs: a directory made by hand or
// by another program. `rename(2)` cannot replace it and `unlink(2)` cannot remove it, so every write,
// removal and wipe of that entry would fail forever. (A link, FIFO or other file there is replaced by the
// rename or removed by `unlink`, both of which act on the name itself and never follow it.) The store moves such a directory, whole, into
// `quarantine/` and carries on. It never deletes it: the store did not make it, so it may hold
// someone's data; inspecting and deleting `quarantine/` is left to the user.
extension DiskStore {
    /// Moves a directory at `name` in `folder` (a fan-out folder, or the store folder for its own files)
    /// into `quarantine/` and reports it.
    ///
    /// - Returns: `true` when the name is free now (the directory was moved aside, or nothing is there any
    ///   more), `false` when something other than a directory is there (the caller's error stands).
    /// - Throws: `CacheError` when the directory cannot be moved (for example on another file system).
    func quarantineIfDirectory(_ name: String, in folder: Directory) throws -> Bool {
        guard let status = try folder.status(name) else { return true }
        guard status.isDirectory else { return false }
        try moveAside(name, in: folder, root: try folders().root)
        return true
    }
}

extension StoreLayout {
    /// Foreign directories found where entry files belong, moved aside whole (never deleted by the store).
    var quarantineFolder: String { root + "/quarantine" }
}

import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Wiring key generations (KeyGenerations.swift) to the store: where `store.check` is read from, creating it
// once per store under `store.lock`, and noticing when another process started a new generation
// (`removeAll()`).
extension DiskStore {
    /// The epoch in use.
    var epoch: Epoch { generations.current.epoch }

    /// Reads and checks `store.check`; `nil` when it (or the store folder) does not exist.
    func loadCheckRecord() throws -> (Epoch, FileStatus)? {
        let root: Directory
        do {
            root = try folders().root
        } catch  where FileError.isNotFound(error) {
            return nil
        }
        return try generations.readRecord(in: root)
    }

    /// Returns the store's epoch, creating the check record (with `preferredSalt`, or a fresh one) when
    /// there is none. Creation happens under `store.lock` and never replaces a record another process
    /// wrote first.
    func establishCheckRecord(preferredSalt: Data?) throws -> (Epoch, FileStatus) {
        if let loaded = try loadCheckRecord() { return loaded }
        let folders = try self.folders()
        let lock = try storeLock(in: folders)
        defer { release(lock) }
        if let loaded = try loadCheckRecord() { return loaded }
        let (_, record) = try generations.makeRecord(salt: preferredSalt)
        try writeAtomically(
            record, in: folders.root, name: StoreLayout.checkRecordName, modified: nil, replacing: false)
        guard let loaded = try loadCheckRecord() else {
            throw CacheError(.io, "the key-check record vanished right after it was written", path: layout.checkRecord)
        }
        return loaded
    }

    /// Makes `loaded` the epoch in use; a different generation drops the index, whose files belong to the
    /// old one (see ``KeyGenerations`` for the order).
    func adoptEpoch(_ loaded: (Epoch, FileStatus)) {
        if generations.adopt(loaded.0, status: loaded.1) { accounting.resetIndex(to: nil) }
    }

    /// The status of `store.check`, `nil` when it is missing. A missing record may mean that the store
    /// folder was deleted or replaced from outside, so the folders are opened again by path and asked
    /// once more.
    private func checkRecordStatus() throws -> FileStatus? {
        if let held = try? folders(), let status = try held.root.status(StoreLayout.checkRecordName) {
            return status
        }
        guard let reopened = try? reopenFolders(creating: false) else { return nil }
        return try reopened.root.status(StoreLayout.checkRecordName)
    }

    /// The epoch to read and write with, refreshed when another process changed `store.check` (one
    /// `fstatat` per call). When the record is missing and `recreating` is set, the folders and the record
    /// are recreated with this process's epoch, so a store deleted from outside keeps working.
    func currentEpoch(recreating: Bool) throws -> Epoch {
        let cached = generations.current
        let onDisk = try checkRecordStatus()
        if let onDisk, onDisk == cached.status { return cached.epoch }
        let loaded: (Epoch, FileStatus)
        if onDisk != nil, let found = try loadCheckRecord() {
            loaded = found
        } else if recreating {
            try createFolders()
            loaded = try establishCheckRecord(preferredSalt: cached.epoch.salt)
        } else {
            return cached.epoch
        }
        adoptEpoch(loaded)
        return loaded.0
    }
}

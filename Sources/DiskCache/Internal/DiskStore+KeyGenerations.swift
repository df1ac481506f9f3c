import CacheCore
import CacheCrypto
import Foundation

// Key generations (epochs) and the key-check record, `store.check`: reading and checking it, creating it
// once per store, and noticing when another process started a new generation (`removeAll()`).
extension DiskStore {
    /// Reads and checks `store.check`; `nil` when it does not exist.
    ///
    /// The file is opened without following a link and without blocking, and must be a regular file of
    /// the record's exact size before a byte is read: a FIFO, a link or a huge sparse file there is a
    /// damaged record (a clear error; nothing is deleted), never a hang or a large allocation.
    func loadCheckRecord() throws -> (Epoch, FileStatus)? {
        let root: Directory
        do {
            root = try folders().root
        } catch  where FileError.isNotFound(error) {
            return nil
        }
        let path = layout.checkRecord
        let fd: Int32
        do {
            fd = try root.openFile(StoreLayout.checkRecordName, O_RDONLY)
        } catch  where error.isNotFound {
            return nil
        } catch  where error.isForeignItem {
            throw KeyCheckRecord.damaged("a symbolic link, not a regular file", path: path, storeName: storeName)
        } catch {
            throw error
        }
        defer { FileSystem.closeFile(fd) }
        let status = try FileSystem.status(of: fd, path: path)
        guard status.isRegularFile else {
            throw KeyCheckRecord.damaged("\(status.kind), not a regular file", path: path, storeName: storeName)
        }
        guard status.size == KeyCheckRecord.size else {
            throw KeyCheckRecord.damaged("wrong length \(status.size)", path: path, storeName: storeName)
        }
        let data = try FileSystem.readSmallFile(fd, count: KeyCheckRecord.size, path: path)
        let salt = try KeyCheckRecord.salt(from: data, master: master, path: path, storeName: storeName)
        return (try Epoch.derive(master: master, salt: salt), status)
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
        let salt = try preferredSalt ?? CryptoBackend.randomBytes(count: KeyCheckRecord.saltSize)
        let record = try KeyCheckRecord.make(salt: salt, master: master)
        try writeAtomically(
            record, in: folders.root, name: StoreLayout.checkRecordName, modified: nil, replacing: false)
        guard let loaded = try loadCheckRecord() else {
            throw CacheError(.io, "the key-check record vanished right after it was written", path: layout.checkRecord)
        }
        return loaded
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
        let (cached, cachedStatus) = state.withLock { ($0.epoch, $0.checkStatus) }
        let onDisk = try checkRecordStatus()
        if let onDisk, onDisk == cachedStatus { return cached }
        let loaded: (Epoch, FileStatus)
        if onDisk != nil, let found = try loadCheckRecord() {
            loaded = found
        } else if recreating {
            try createFolders()
            loaded = try establishCheckRecord(preferredSalt: cached.salt)
        } else {
            return cached
        }
        state.withLock {
            if $0.epoch.id != loaded.0.id { $0.resetIndex(to: nil) }
            $0.epoch = loaded.0
            $0.checkStatus = loaded.1
        }
        return loaded.0
    }
}

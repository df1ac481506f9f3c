import CacheCore
import SealedRecord

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
    // MARK: - Read

    /// Reads the live record for `keyBytes`.
    ///
    /// A missing, expired, corrupt or old-epoch file is a miss (the last three are removed and
    /// counted). A file that cannot be read for a passing reason, or a foreign item at the entry's name
    /// (a folder, a link, a FIFO: the store did not make it), is reported and left in place.
    ///
    /// - Throws: `CacheError` for read failures other than "not found".
    ///
    /// With `includingStale`, an expired record still before its stale-until instant is returned (and
    /// counts nothing); without it, such a record is a miss that is left in place.
    func read(keyBytes: Data, includingStale: Bool = false) throws -> EntryRecord? {
        try translatingErrors {
            var epoch = try currentEpoch(recreating: false)
            let name = try fileName(for: keyBytes)
            let opened: (fd: Int32, folder: Directory)?
            do {
                opened = try openEntryFile(name)
            } catch {
                throw readFailed(error, path: layout.entry(name))
            }
            guard let (fd, folder) = opened else {
                count { $0.misses += 1 }
                return nil
            }
            defer { FileSystem.closeFile(fd) }
            let outcome: Result<EntryRecord, CorruptionReason>
            let status: FileStatus
            do {
                (outcome, status) = try Self.openEntry(
                    fd, path: { layout.entry(name) }, name: name, limit: maxEntryFileSize
                ) {
                    contents, count, status in
                    var outcome = try EntryRecord.open(
                        contents, count: count, fileName: name, epochID: epoch.id, key: epoch.sealingSubkey)
                    if case .failure(.oldEpoch) = outcome {
                        // Another process may have started a new epoch since our last look at store.check.
                        let fresh = try currentEpoch(recreating: false)
                        if fresh.id != epoch.id {
                            epoch = fresh
                            outcome = try EntryRecord.open(
                                contents, count: count, fileName: name, epochID: epoch.id, key: epoch.sealingSubkey)
                        }
                    }
                    return outcome
                }
            } catch let error as FileError {
                throw readFailed(error, path: layout.entry(name))
            }
            var record: EntryRecord
            switch outcome {
            case .failure(let reason):
                removeCorrupt(name: name, in: folder, status: status, reason: reason)
                count { $0.misses += 1 }
                return nil
            case .success(let opened):
                record = opened
            }
            guard record.keyBytes == keyBytes else {
                removeCorrupt(name: name, in: folder, status: status, reason: .misplaced)
                count { $0.misses += 1 }
                return nil
            }
            var stamped: [String: UInt64] = [:]
            var current: [String: UInt64] = [:]
            if record.header.hasTags {
                guard let tagged = readTags(of: record, name: name, in: folder, status: status) else {
                    count { $0.misses += 1 }
                    return nil
                }
                (record, stamped, current) = tagged
            }
            let now = clock.now
            // The kernel's one liveness rule (Sources/SealedRecord), shared with the Redis tier.
            switch record.header.stamp(tagVersions: stamped).liveness(
                currentEpoch: epoch.id, currentTagVersions: current, at: now)
            {
            case .live:
                break
            case .servableStale:
                // Kept stale for loads that may serve it: theirs to read, a plain miss, not removed.
                if includingStale { return record }
                count { $0.misses += 1 }
                return nil
            case .fencedByTag:
                // A tag removed since the stamp: removed only if still the file read, so a newer write survives.
                _ = removeIfUnchangedAndForget(name, in: folder, status: status)
                count { $0.misses += 1 }
                return nil
            case .wrongEpoch:
                // Not reached: the record opened under this epoch's subkey. Judged like any old-epoch file.
                removeCorrupt(name: name, in: folder, status: status, reason: .oldEpoch)
                count { $0.misses += 1 }
                return nil
            case .expired:
                _ = removeIfUnchangedAndForget(name, in: folder, status: status)
                count {
                    $0.expirations += 1
                    $0.misses += 1
                }
                return nil
            }
            // Recency lives in the modification time, kept at `recencyResolution`: a time that recent is
            // left alone, which saves a metadata write on most hits. A store we may not change still
            // serves hits.
            var stamp = status.modificationDate
            if abs(now.timeIntervalSince(stamp)) >= Self.recencyResolution,
                (try? FileSystem.setTimes(fd, to: now, path: name)) != nil
            {
                stamp = FileTime.normalized(now)
            }
            // Recency only (StoreAccounting.recordHit), so a removal or a newer write that ran since the open
            // is never undone (DiskStore+NameLocks.swift).
            accounting.recordHit(name, lastAccess: stamp)
            return record
        }
    }

    /// `record` without its tag block and with its tags, the versions stamped in the block and the tags'
    /// current versions, for the liveness verdict to compare; `nil` when it cannot be judged: a malformed
    /// block is removed as corrupt, and an entry whose counters cannot be read or are damaged is left in
    /// place and reported, never served.
    private func readTags(
        of record: EntryRecord, name: String, in folder: Directory, status: FileStatus
    ) -> (record: EntryRecord, stamped: [String: UInt64], current: [String: UInt64])? {
        guard let (stamped, value) = TagBlock.decode(record.valueBytes) else {
            removeCorrupt(name: name, in: folder, status: status, reason: .badTagBlock)
            return nil
        }
        let current: [String: UInt64]
        do {
            current = try currentTagVersions(of: stamped.keys)
        } catch let error as CacheError where error.code == .corruptEntry {
            return nil  // reported by tagVersions(of:)
        } catch {
            report(.readFailed, "cannot read a tag's version counter; the entry is a miss", error: error)
            return nil
        }
        var split = record
        split.valueBytes = value
        split.tags = Set(stamped.keys)
        return (split, stamped, current)
    }

    /// Opens the entry file `name` for reading (no link followed, no blocking), with its fan-out folder;
    /// `nil` when there is none. When the entries folder was deleted from outside (and perhaps made
    /// again by another process), the folders are opened again once.
    ///
    /// - Throws: `FileError` for a foreign item on the way (`ELOOP`, `ENOTDIR`) or another failure.
    func openEntryFile(_ name: String) throws -> (fd: Int32, folder: Directory)? {
        for attempt in 0..<2 {
            let folders: StoreFolders
            do {
                folders = try self.folders()
            } catch  where FileError.isNotFound(error) {
                return nil
            }
            do {
                let folder = try fanOutFolder(for: name, in: folders, creating: false)
                return (try folder.openFile(name, O_RDONLY), folder)
            } catch  where FileError.isNotFound(error) {
                guard attempt == 0, StoreFolders.isDeleted(folders.entries),
                    (try? reopenFolders(creating: false)) != nil
                else { return nil }
            }
        }
        return nil
    }

    /// The largest entry file worth reading: what a write could have made under this store's size limit
    /// and AES-GCM's per-call limit. A longer file is judged corrupt without a byte being allocated.
    var maxEntryFileSize: Int {
        min(configuration.byteLimit ?? .max, DiskCacheConfiguration.largestEntrySize)
    }

    /// Checks the entry file open at `fd` and, when it may be an entry, reads it and calls `body` with
    /// its bytes (a buffer `body` may take over, the count read, and the status).
    ///
    /// Nothing is allocated from an untrusted size: the file must be a regular file (else
    /// ``FileError/notRegularFile(_:operation:path:)``) no longer than `limit`, and a file over
    /// ``EntryRecord/chunkSize`` must have a header whose lengths fix exactly its size before it is read.
    static func openEntry<R>(
        _ fd: Int32, path: () -> String, name: String, limit: Int,
        _ body: (UninitializedBytes, Int, FileStatus) throws -> Result<R, CorruptionReason>
    ) throws -> (Result<R, CorruptionReason>, FileStatus) {
        let status = try FileSystem.status(of: fd, path: name)
        guard status.isRegularFile else {
            throw FileError.notRegularFile(status, operation: "cannot read entry", path: path())
        }
        guard status.size <= limit else { return (.failure(.tooLarge), status) }
        if status.size > EntryRecord.chunkSize {
            let prefix = try FileSystem.readPrefix(fd, count: EntryRecord.headerSize, path: path())
            switch EntryRecord.parseHeader(prefix) {
            case .failure(let reason):
                return (.failure(reason), status)
            case .success(let header):
                let expected = EntryRecord.overhead + header.keyLength + header.valueLength
                guard expected == status.size else {
                    return (.failure(status.size < expected ? .truncated : .lengthMismatch), status)
                }
            }
        }
        let (contents, count) = try FileSystem.readContents(fd, status: status, path: path())
        return (try body(contents, count, status), status)
    }

    private func readFailed(_ error: any Error, path: String) -> any Error {
        count { $0.readFailures += 1 }
        report(.readFailed, "cannot read entry; the file was left in place", path: path, error: error)
        return error
    }

    func removeCorrupt(name: String, in folder: Directory, status: FileStatus, reason: CorruptionReason) {
        let path = layout.entry(name)
        let removed = removeIfUnchangedAndForget(name, in: folder, status: status)
        if removed { count { $0.corruptEntriesRemoved += 1 } }
        if removed { report(.corruptEntryRemoved, "removed a corrupt entry: \(reason.rawValue)", path: path) }
    }

    // MARK: - Write

    /// Stores a record for `keyBytes`, then trims to the limits if they are exceeded.
    ///
    /// - Throws: `CacheError` `.entryTooLarge` when the file alone would exceed `byteLimit` (the earlier
    ///   entry for the key is removed, no other is evicted), or the file-system error.
    /// With `hasTags`, `valueBytes` start with a tag block (the kernel's `TagBlock`) and the record is flagged so.
    func write(
        keyBytes: Data, valueBytes: Data, expiresAt: Date?, cost: Int?, staleUntil: Date? = nil, hasTags: Bool = false
    ) throws {
        try translatingErrors {
            try requireWritable("store an entry")
            let now = clock.now
            let name = try fileName(for: keyBytes)
            if let expiresAt, now >= expiresAt {
                try removeEntry(named: name)
                return
            }
            if configuration.byteLimit == 0 || configuration.countLimit == 0 {
                // A limit of 0 keeps nothing: the write succeeds and stores nothing, and entries kept under
                // a larger limit before this store was reopened with 0 go too, as after any write.
                try removeEntry(named: name)
                try enforceLimits(protecting: nil)
                return
            }
            let size = EntryRecord.overhead + keyBytes.count + valueBytes.count
            // Without `byteLimit` the format's own bound still applies (AES-GCM seals at most
            // `maxBodyLength` bytes), so a larger value is refused like one over the limit, not failed as a
            // crypto error that would leave the earlier value in place.
            let byteLimit = maxEntryFileSize
            if size > byteLimit {
                // The caller replaced the value: like MemoryCache, drop the earlier one so no tier (and no
                // MultiCache read falling through to this one) can return a value older than the last write.
                try? removeEntry(named: name)
                throw CacheError(
                    .entryTooLarge,
                    "entry of \(size) bytes on disk exceeds the store's limit of \(byteLimit) bytes; it was not "
                        + "stored and the earlier entry for its key was removed", path: layout.entry(name))
            }
            let stamp = FileTime.normalized(now)
            for attempt in 0..<2 {
                let epoch = try currentEpoch(recreating: true)
                let header = EntryRecord.Header(
                    epochID: epoch.id, createdAt: now, expiresAt: expiresAt, cost: cost,
                    keyLength: keyBytes.count, valueLength: valueBytes.count, staleUntil: staleUntil, hasTags: hasTags)
                do {
                    let folder = try fanOutFolder(for: name, in: try folders(), creating: true)
                    let commit = { self.accounting.recordInsertion(name, size: size, lastAccess: stamp) }
                    try writeAtomically(in: folder, name: name, modified: now, replacing: true, commit: commit) {
                        fd, path in
                        try EntryRecord.write(
                            keyBytes: keyBytes, valueBytes: valueBytes, header: header, fileName: name,
                            key: epoch.sealingSubkey, to: fd, path: path)
                    }
                    break
                } catch  where FileError.isNotFound(error) && attempt == 0 {
                    // The store folder (or one of its folders) was deleted from outside: recreate it with the
                    // same epoch, retry.
                    try createFolders()
                    _ = try establishCheckRecord(preferredSalt: epoch.salt)
                }
            }
            try enforceLimits(protecting: name)
        }
    }

    // MARK: - Remove

    /// Removes the entry for `keyBytes`, if any.
    func remove(keyBytes: Data) throws {
        try translatingErrors {
            try requireWritable("remove an entry")
            try removeEntry(named: try fileName(for: keyBytes))
        }
    }

    /// Removes the entry file `name`; a foreign directory in its place is moved to `quarantine/`.
    func removeEntry(named name: String) throws {
        try withNameLock(name) { try removeEntryFile(named: name) }
    }

    /// ``removeEntry(named:)`` with the name's stripe held.
    private func removeEntryFile(named name: String) throws {
        let folder: Directory
        do {
            folder = try fanOutFolder(for: name, in: try folders(), creating: false)
        } catch  where FileError.isNotFound(error) {
            accounting.recordRemoval(name)
            return  // no fan-out folder (or no store): nothing to remove
        } catch let error as FileError where error.isForeignItem {
            // A link or file where the fan-out folder belongs: moved aside, never followed.
            let folders = try folders()
            try moveAside(String(name.prefix(2)), in: folders.entries, root: folders.root)
            accounting.recordRemoval(name)
            return
        }
        do {
            try folder.unlink(name)
        } catch {
            guard try quarantineIfDirectory(name, in: folder) else { throw error }
        }
        accounting.recordRemoval(name)
    }

    // MARK: - Per-key locks

    /// Runs `body` holding the exclusive `flock` on `locks/<name>.lock` for `keyBytes`.
    ///
    /// - Returns: `body`'s result, or `nil` when `wait` is `false` and the lock is held elsewhere.
    func withKeyLock<R>(keyBytes: Data, wait: Bool, _ body: () throws -> R) throws -> R? {
        // Taking a lock creates its file: a store this process may not modify refuses, as any change does,
        // before anything is opened for writing.
        try requireWritable("take a key's lock")
        let lock: FileLock? = try translatingErrors { () throws -> FileLock? in
            let name = try fileName(for: keyBytes) + ".lock"
            for attempt in 0..<2 {
                do {
                    let folders = try folders()
                    let locks = try locksFolder(in: folders)
                    do {
                        return try FileLock.acquire(name, in: locks, wait: wait)
                    } catch let error as FileError where error.isForeignItem || error.detail != nil {
                        // A link, FIFO or folder planted at the lock's name: moved aside, never followed.
                        try moveAside(name, in: locks, root: folders.root)
                        return try FileLock.acquire(name, in: locks, wait: wait)
                    }
                } catch  where FileError.isNotFound(error) && attempt == 0 {
                    try createFolders()
                }
            }
            return try FileLock.acquire(name, in: try locksFolder(in: try folders()), wait: wait)
        }
        guard let lock else { return nil }
        defer { lock.unlock() }
        return try body()
    }
}

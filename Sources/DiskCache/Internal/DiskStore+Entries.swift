import CacheCore
import Foundation

extension DiskStore {
    // MARK: - Read

    /// Reads the live record for `keyBytes`.
    ///
    /// A missing, expired, corrupt or old-epoch file is a miss (the last three are removed and
    /// counted). A file that cannot be read for a passing reason is reported and left in place.
    ///
    /// - Throws: `CacheError` for read failures other than "not found".
    func read(keyBytes: Data) throws -> EntryRecord? {
        try translatingErrors {
            var epoch = try currentEpoch(recreating: false)
            let name = try fileName(for: keyBytes)
            let path = layout.entry(name)
            let fd: Int32
            do {
                fd = try FileSystem.openFile(path, O_RDONLY | O_NOFOLLOW)
            } catch  where FileError.isNotFound(error) {
                count { $0.misses += 1 }
                return nil
            } catch {
                throw readFailed(error, path: path)
            }
            defer { FileSystem.closeFile(fd) }
            let outcome: Result<EntryRecord, CorruptionReason>
            let status: FileStatus
            do {
                (outcome, status) = try FileSystem.withContents(of: fd, path: path) { file, status in
                    var outcome = try EntryRecord.open(file, fileName: name, epochID: epoch.id, key: epoch.sealingKey)
                    if case .failure(.oldEpoch) = outcome {
                        // Another process may have started a new epoch since our last look at store.check.
                        let fresh = try currentEpoch(recreating: false)
                        if fresh.id != epoch.id {
                            epoch = fresh
                            outcome = try EntryRecord.open(
                                file, fileName: name, epochID: epoch.id, key: epoch.sealingKey)
                        }
                    }
                    return (outcome, status)
                }
            } catch let error as FileError {
                throw readFailed(error, path: path)
            }
            let record: EntryRecord
            switch outcome {
            case .failure(let reason):
                removeCorrupt(name: name, path: path, status: status, reason: reason)
                count { $0.misses += 1 }
                return nil
            case .success(let opened):
                record = opened
            }
            guard record.keyBytes == keyBytes else {
                removeCorrupt(name: name, path: path, status: status, reason: .misplaced)
                count { $0.misses += 1 }
                return nil
            }
            let now = clock.now
            if let expiresAt = record.header.expiresAt, now >= expiresAt {
                removeIfUnchanged(path, status: status)
                state.withLock {
                    $0.indexRemove(name)
                    $0.pending.expirations += 1
                    $0.pending.misses += 1
                }
                return nil
            }
            // Recency lives in the modification time, kept at `recencyResolution`: a time that recent is
            // left alone, which saves a metadata write on most hits. A store we may not change still
            // serves hits.
            var stamp = status.modificationDate
            if abs(now.timeIntervalSince(stamp)) >= Self.recencyResolution,
                (try? FileSystem.setTimes(fd, to: now, path: path)) != nil
            {
                stamp = FileTime.normalized(now)
            }
            state.withLock {
                $0.indexRecord(name, size: status.size, lastAccess: stamp)
                $0.pending.hits += 1
            }
            return record
        }
    }

    private func readFailed(_ error: any Error, path: String) -> any Error {
        count { $0.readFailures += 1 }
        report(.readFailed, "cannot read entry; the file was left in place", path: path, error: error)
        return error
    }

    func removeCorrupt(name: String, path: String, status: FileStatus, reason: CorruptionReason) {
        let removed = removeIfUnchanged(path, status: status)
        state.withLock {
            $0.indexRemove(name)
            if removed { $0.pending.corruptEntriesRemoved += 1 }
        }
        if removed { report(.corruptEntryRemoved, "removed a corrupt entry: \(reason.rawValue)", path: path) }
    }

    // MARK: - Write

    /// Stores a record for `keyBytes`, then trims to the limits if they are exceeded.
    ///
    /// - Throws: `CacheError` `.entryTooLarge` when the file alone would exceed `maxBytes` (the earlier
    ///   entry for the key is removed, no other is evicted), or the file-system error.
    func write(keyBytes: Data, valueBytes: Data, expiresAt: Date?, cost: Int?) throws {
        try translatingErrors {
            try requireWritable("store an entry")
            let now = clock.now
            let name = try fileName(for: keyBytes)
            if let expiresAt, now >= expiresAt {
                try removeEntry(named: name)
                return
            }
            if configuration.maxBytes == 0 || configuration.maxEntries == 0 {
                // A limit of 0 keeps nothing: the write succeeds and stores nothing.
                try removeEntry(named: name)
                return
            }
            let size = EntryRecord.overhead + keyBytes.count + valueBytes.count
            if let maxBytes = configuration.maxBytes, size > maxBytes {
                // The caller replaced the value: like MemoryCache, drop the earlier one so no tier (and no
                // MultiCache read falling through to this one) can return a value older than the last write.
                try? removeEntry(named: name)
                throw CacheError(
                    .entryTooLarge,
                    "entry of \(size) bytes on disk exceeds the store's limit of \(maxBytes) bytes; it was not "
                        + "stored and the earlier entry for its key was removed", path: layout.entry(name))
            }
            for attempt in 0..<2 {
                let epoch = try currentEpoch(recreating: true)
                let header = EntryRecord.Header(
                    epochID: epoch.id, createdAt: now, expiresAt: expiresAt, cost: cost,
                    keyLength: keyBytes.count, valueLength: valueBytes.count)
                do {
                    try EntryRecord.seal(
                        keyBytes: keyBytes, valueBytes: valueBytes, header: header, fileName: name,
                        key: epoch.sealingKey
                    ) { file in
                        try writeAtomically(file, to: layout.entry(name), modified: now, replacing: true)
                    }
                    break
                } catch  where FileError.isNotFound(error) && attempt == 0 {
                    // The store folder was deleted from outside: recreate it with the same epoch, retry.
                    try createFolders()
                    _ = try establishCheckRecord(preferredSalt: state.withLock { $0.epoch.salt })
                }
            }
            let stamp = FileTime.normalized(now)
            state.withLock {
                $0.indexRecord(name, size: size, lastAccess: stamp)
                $0.pending.insertions += 1
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
        let path = layout.entry(name)
        do {
            try FileSystem.unlinkFile(path)
        } catch {
            guard try quarantineIfDirectory(path) else { throw error }
        }
        state.withLock { $0.indexRemove(name) }
    }

    // MARK: - Per-key locks

    /// Runs `body` holding the exclusive `flock` on `locks/<name>.lock` for `keyBytes`.
    ///
    /// - Returns: `body`'s result, or `nil` when `wait` is `false` and the lock is held elsewhere.
    func withKeyLock<R>(keyBytes: Data, wait: Bool, _ body: () throws -> R) throws -> R? {
        let lock: FileLock? = try translatingErrors {
            let path = layout.keyLock(try fileName(for: keyBytes))
            do {
                return try FileLock.acquire(path, wait: wait)
            } catch  where FileError.isNotFound(error) {
                try createFolders()
                return try FileLock.acquire(path, wait: wait)
            }
        }
        guard let lock else { return nil }
        defer { lock.unlock() }
        return try body()
    }
}

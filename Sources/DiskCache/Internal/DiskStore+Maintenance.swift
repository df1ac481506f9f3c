import CacheCore
import Foundation

extension DiskStore {
    // MARK: - Index

    /// Every entry file with its size and modification time: one `lstat` per file.
    ///
    /// - Complexity: O(n) file-system calls.
    func scanEntries() throws -> [String: (size: Int, modified: Date)] {
        var result: [String: (size: Int, modified: Date)] = [:]
        for folder in try FileSystem.contentsOfDirectory(layout.entriesFolder) where folder.utf8.count == 2 {
            try FileSystem.forEachFile(in: layout.entriesFolder + "/" + folder) { name, status in
                guard status.isRegularFile, StoreLayout.isEntryName(name), name.hasPrefix(folder) else { return }
                result[name] = (status.size, status.modificationDate)
            }
        }
        return result
    }

    /// Builds the size and recency index on first need (a write with limits, statistics, a trim), so
    /// opening a large store costs no per-file work.
    func ensureIndex() throws {
        let generation: Int? = state.withLock { $0.index == nil ? $0.beginScan() : nil }
        guard let generation else { return }
        let scan: [String: (size: Int, modified: Date)]
        do {
            scan = try scanEntries()
        } catch {
            state.withLock { $0.endScan() }
            throw error
        }
        _ = state.withLock { $0.finishScan(scan, generation: generation, onlyIfMissing: true) }
    }

    func lowWater(_ limit: Int) -> Int {
        Int((Double(limit) * configuration.lowWaterFraction).rounded(.down))
    }

    /// After a write: when a limit is exceeded, trims to the low-water marks, sparing `protected`.
    func enforceLimits(protecting protected: String) throws {
        let maxBytes = configuration.maxBytes
        let maxEntries = configuration.maxEntries
        guard maxBytes != nil || maxEntries != nil else { return }
        try ensureIndex()
        let over = state.withLock { state -> Bool in
            guard let index = state.index else { return false }
            return index.totalBytes > (maxBytes ?? .max) || index.count > (maxEntries ?? .max)
        }
        guard over else { return }
        try trim(toBytes: maxBytes.map(lowWater), toCount: maxEntries.map(lowWater), protecting: protected)
    }

    /// Removes least-recently-used entries until the store holds at most `bytes` bytes and `count`
    /// entries, sparing `protected`. Runs under `store.lock` and rescans the folder first, so entries
    /// written by other processes are counted.
    ///
    /// - Returns: The number of entries removed.
    @discardableResult
    func trim(toBytes bytes: Int?, toCount count: Int?, protecting protected: String? = nil) throws -> Int {
        try translatingErrors {
            try requireWritable("trim")
            let lock = try FileLock.acquire(layout.storeLock, wait: true)
            defer { lock?.unlock() }
            let generation = state.withLock { $0.beginScan() }
            let scan: [String: (size: Int, modified: Date)]
            do {
                scan = try scanEntries()
            } catch {
                state.withLock { $0.endScan() }
                throw error
            }
            let snapshot = state.withLock { state -> (order: [String], count: Int, bytes: Int)? in
                guard state.finishScan(scan, generation: generation, onlyIfMissing: false), let index = state.index
                else { return nil }
                return (index.leastRecentlyUsedFirst(), index.count, index.totalBytes)
            }
            // A wipe ran meanwhile: there is nothing left to trim.
            guard let (order, initialCount, initialBytes) = snapshot else { return 0 }
            let targetBytes = bytes ?? .max
            let targetCount = count ?? .max
            var heldCount = initialCount
            var heldBytes = initialBytes
            var removed = 0
            for name in order {
                guard heldBytes > targetBytes || heldCount > targetCount else { break }
                guard name != protected, let size = scan[name]?.size else { continue }
                guard (try? FileSystem.unlinkFile(layout.entry(name))) != nil else { continue }
                heldBytes -= size
                heldCount -= 1
                removed += 1
                state.withLock { $0.indexRemove(name) }
            }
            state.withLock { $0.pending.evictions += removed }
            return removed
        }
    }

    // MARK: - Sweeps

    /// What one entry file holds, after full authentication.
    enum Inspection {
        case live(EntryRecord, FileStatus)
        case expired(FileStatus)
        case corrupt(CorruptionReason, FileStatus)
        case missing
    }

    /// Reads and authenticates the file `name`, checking that its key hashes to its name.
    func inspect(_ name: String, epoch: Epoch, now: Date) throws -> Inspection {
        let path = layout.entry(name)
        let fd: Int32
        do {
            fd = try FileSystem.openFile(path, O_RDONLY | O_NOFOLLOW)
        } catch  where FileError.isNotFound(error) {
            return .missing
        }
        defer { FileSystem.closeFile(fd) }
        let (outcome, status) = try Self.openEntry(fd, path: path, name: name, epoch: epoch)
        switch outcome {
        case .failure(let reason):
            return .corrupt(reason, status)
        case .success(let record):
            guard try fileName(for: record.keyBytes) == name else { return .corrupt(.misplaced, status) }
            if let expiresAt = record.header.expiresAt, now >= expiresAt { return .expired(status) }
            return .live(record, status)
        }
    }

    /// Reads and opens the entry file open at `fd`.
    static func openEntry(
        _ fd: Int32, path: String, name: String, epoch: Epoch
    ) throws -> (Result<EntryRecord, CorruptionReason>, FileStatus) {
        try FileSystem.withContents(of: fd, path: path) { file, status in
            (try EntryRecord.open(file, fileName: name, epochID: epoch.id, key: epoch.sealingKey), status)
        }
    }

    /// Visits every entry file, fully authenticated; removes corrupt and expired ones.
    ///
    /// - Returns: The files removed, with reasons, and how many were checked.
    func sweep(
        progress: ((Int, Int) -> Void)?, visit: (EntryRecord, FileStatus) -> Void
    ) throws -> DiskCacheVerifyReport {
        try translatingErrors {
            let epoch = try currentEpoch(recreating: false)
            let names = try scanEntries().keys.sorted()
            let now = clock.now
            var issues: [DiskCacheVerifyReport.Issue] = []
            var checked = 0
            for (position, name) in names.enumerated() {
                progress?(position, names.count)
                let path = layout.entry(name)
                let inspection: Inspection
                do {
                    inspection = try inspect(name, epoch: epoch, now: now)
                } catch let error as FileError {
                    count { $0.readFailures += 1 }
                    report(.readFailed, "cannot read entry; the file was left in place", path: path, error: error)
                    continue
                }
                checked += 1
                switch inspection {
                case .missing:
                    checked -= 1
                case .live(let record, let status):
                    visit(record, status)
                case .expired(let status):
                    if removeIfUnchanged(path, status: status) {
                        state.withLock {
                            $0.indexRemove(name)
                            $0.pending.expirations += 1
                        }
                        issues.append(.init(path: path, reason: "expired"))
                    }
                case .corrupt(let reason, let status):
                    removeCorrupt(name: name, path: path, status: status, reason: reason)
                    issues.append(.init(path: path, reason: reason.rawValue))
                }
            }
            progress?(names.count, names.count)
            return DiskCacheVerifyReport(checked: checked, removed: issues.map(\.path), issues: issues)
        }
    }

    /// Removes expired and old-epoch entries, reading only each file's header (no decryption).
    ///
    /// - Returns: How many files were removed.
    func removeExpired() throws -> Int {
        try translatingErrors {
            let epoch = try currentEpoch(recreating: false)
            let now = clock.now
            var removed = 0
            for name in try scanEntries().keys {
                let path = layout.entry(name)
                guard let fd = try? FileSystem.openFile(path, O_RDONLY | O_NOFOLLOW) else { continue }
                defer { FileSystem.closeFile(fd) }
                guard let prefix = try? FileSystem.readPrefix(fd, count: EntryRecord.headerSize, path: path),
                    let status = try? FileSystem.status(of: fd, path: path)
                else { continue }
                switch EntryRecord.parseHeader(prefix) {
                case .failure(let reason):
                    removeCorrupt(name: name, path: path, status: status, reason: reason)
                case .success(let header) where header.epochID != epoch.id:
                    removeCorrupt(name: name, path: path, status: status, reason: .oldEpoch)
                case .success(let header):
                    guard let expiresAt = header.expiresAt, now >= expiresAt,
                        removeIfUnchanged(path, status: status)
                    else { continue }
                    removed += 1
                    state.withLock {
                        $0.indexRemove(name)
                        $0.pending.expirations += 1
                    }
                }
            }
            return removed
        }
    }

    // MARK: - Statistics

    /// Persisted counters plus this process's unflushed ones, with the index's totals.
    func statistics() -> DiskCacheStatistics {
        do {
            try ensureIndex()
        } catch {
            report(.maintenanceFailed, "cannot scan the store for its size", path: layout.entriesFolder, error: error)
        }
        let (pending, held, bytes) = state.withLock { ($0.pending, $0.index?.count ?? 0, $0.index?.totalBytes ?? 0) }
        let total = StatisticsFile.read(layout.statisticsFile) + pending
        return DiskCacheStatistics(
            base: CacheStatistics(
                hits: total.hits, misses: total.misses, insertions: total.insertions, evictions: total.evictions,
                expirations: total.expirations, count: held, totalCost: bytes),
            corruptEntriesRemoved: total.corruptEntriesRemoved,
            readFailures: total.readFailures,
            maxBytes: configuration.maxBytes,
            maxEntries: configuration.maxEntries)
    }

    /// Merges this process's counters into `store.stats` under `store.lock`.
    ///
    /// Never creates anything: when the store folder (or its lock file or `tmp/`) is gone — deleted from
    /// outside — the counts stay pending, so a flush from `deinit` cannot resurrect a deleted store.
    func flushStatistics() throws {
        try translatingErrors {
            let snapshot = state.withLock { $0.pending }
            // Counters are advisory: a store opened read-only keeps them in memory, without an error.
            guard !snapshot.isZero, !isReadOnly else { return }
            let lock: FileLock?
            do {
                lock = try FileLock.acquire(layout.storeLock, wait: true, creating: false)
            } catch  where FileError.isNotFound(error) {
                return
            }
            defer { lock?.unlock() }
            let merged = StatisticsFile.read(layout.statisticsFile) + snapshot
            do {
                try writeAtomically(
                    try StatisticsFile.encode(merged), to: layout.statisticsFile, modified: nil, replacing: true)
            } catch  where FileError.isNotFound(error) {
                return
            }
            state.withLock { $0.pending = $0.pending - snapshot }
        }
    }
}

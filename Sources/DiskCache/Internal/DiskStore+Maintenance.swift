import CacheCore
import Foundation

extension DiskStore {
    // MARK: - Index

    /// Every entry file with its size and modification time: one `fstatat` per item, relative to the
    /// folders' descriptors, no link followed.
    ///
    /// - Parameter foreignItem: Called with the path and status of each foreign item met: something other
    ///   than a folder at a fan-out name, or other than a regular file at an entry name.
    /// - Complexity: O(n) file-system calls.
    func scanEntries(
        foreignItem: ((String, FileStatus) -> Void)? = nil
    ) throws -> [String: (size: Int, modified: Date)] {
        let folders: StoreFolders
        do {
            folders = try self.folders()
        } catch  where FileError.isNotFound(error) {
            return [:]
        }
        var fanOuts: [String] = []
        try folders.entries.forEach { name, status in
            guard name.utf8.count == 2 else { return }
            if status.isDirectory {
                fanOuts.append(name)
            } else {
                foreignItem?(layout.entriesFolder + "/" + name, status)
            }
        }
        var result: [String: (size: Int, modified: Date)] = [:]
        for prefix in fanOuts {
            let folder: Directory
            do {
                folder = try folders.entries.directory(prefix)
            } catch  where error.isNotFound || error.isForeignItem {
                continue  // removed or swapped since it was listed; never followed
            } catch {
                throw error
            }
            try folder.forEach { name, status in
                guard StoreLayout.isEntryName(name), name.hasPrefix(prefix) else { return }
                if status.isRegularFile {
                    result[name] = (status.size, status.modificationDate)
                } else {
                    foreignItem?(layout.entry(name), status)
                }
            }
        }
        return result
    }

    /// Builds the size and recency index on first need (a write with limits, statistics, a trim), so
    /// opening a large store costs no per-file work.
    ///
    /// - Parameter foreignItem: Called for each foreign item met when the index is built now (see
    ///   ``scanEntries(foreignItem:)``); not called when the index already exists.
    func ensureIndex(foreignItem: ((String, FileStatus) -> Void)? = nil) throws {
        let generation: Int? = state.withLock { $0.index == nil ? $0.beginScan() : nil }
        guard let generation else { return }
        let scan: [String: (size: Int, modified: Date)]
        do {
            scan = try scanEntries(foreignItem: foreignItem)
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
    func enforceLimits(protecting protected: String?) throws {
        let byteLimit = configuration.byteLimit
        let countLimit = configuration.countLimit
        guard byteLimit != nil || countLimit != nil else { return }
        try ensureIndex()
        let over = state.withLock { state -> Bool in
            guard let index = state.index else { return false }
            return index.totalBytes > (byteLimit ?? .max) || index.count > (countLimit ?? .max)
        }
        guard over else { return }
        try trim(toBytes: byteLimit.map(lowWater), toCount: countLimit.map(lowWater), protecting: protected)
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
            let lock = try storeLock(in: try folders())
            defer { release(lock) }
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
                guard name != protected, let size = scan[name]?.size,
                    let folder = try? fanOutFolder(for: name, in: try folders(), creating: false),
                    withNameLock(
                        name,
                        {
                            guard (try? folder.unlink(name)) != nil else { return false }
                            state.withLock { $0.indexRemove(name) }
                            return true
                        })
                else { continue }
                heldBytes -= size
                heldCount -= 1
                removed += 1
            }
            state.withLock { $0.pending.evictions += removed }
            return removed
        }
    }

    // MARK: - Sweeps

    /// What one entry file holds, after full authentication.
    enum Inspection {
        case live(EntryRecord, FileStatus)
        case expired(FileStatus, Directory)
        case corrupt(CorruptionReason, FileStatus, Directory)
        case missing
    }

    /// Reads and authenticates the file `name`, checking that its key hashes to its name.
    func inspect(_ name: String, epoch: Epoch, now: Date) throws -> Inspection {
        guard let (fd, folder) = try openEntryFile(name) else { return .missing }
        defer { FileSystem.closeFile(fd) }
        let (outcome, status) = try Self.openEntry(
            fd, path: { layout.entry(name) }, name: name, limit: maxEntryFileSize
        ) {
            contents, count, _ in
            try EntryRecord.open(contents, count: count, fileName: name, epochID: epoch.id, key: epoch.sealingKey)
        }
        switch outcome {
        case .failure(let reason):
            return .corrupt(reason, status, folder)
        case .success(let record):
            guard try fileName(for: record.keyBytes) == name else { return .corrupt(.misplaced, status, folder) }
            if let expiresAt = record.header.expiresAt, now >= expiresAt { return .expired(status, folder) }
            return .live(record, status)
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
            // Foreign items at entry and fan-out names are reported as unreadable and left in place:
            // never followed, never deleted (Docs/Security.md).
            var foreign: [(String, FileStatus)] = []
            let names = try scanEntries { foreign.append(($0, $1)) }.keys.sorted()
            for (path, status) in foreign {
                count { $0.readFailures += 1 }
                report(
                    .readFailed, "an item the store did not create sits at an entry's name; it was left in place",
                    path: path,
                    error: FileError.notRegularFile(status, operation: "cannot read entry", path: path).cacheError)
            }
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
                    report(
                        .readFailed, "cannot read entry; the file was left in place", path: path,
                        error: error.cacheError)
                    continue
                }
                checked += 1
                switch inspection {
                case .missing:
                    checked -= 1
                case .live(let record, let status):
                    visit(record, status)
                case .expired(let status, let folder):
                    if removeIfUnchangedAndForget(name, in: folder, status: status) {
                        count { $0.expirations += 1 }
                        issues.append(.init(path: path, reason: "expired"))
                    }
                case .corrupt(let reason, let status, let folder):
                    removeCorrupt(name: name, in: folder, status: status, reason: reason)
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
                guard let (fd, folder) = try? openEntryFile(name) else { continue }
                defer { FileSystem.closeFile(fd) }
                let path = layout.entry(name)
                guard let status = try? FileSystem.status(of: fd, path: path), status.isRegularFile,
                    let prefix = try? FileSystem.readPrefix(fd, count: EntryRecord.headerSize, path: path)
                else { continue }
                switch EntryRecord.parseHeader(prefix) {
                case .failure(let reason):
                    removeCorrupt(name: name, in: folder, status: status, reason: reason)
                case .success(let header) where header.epochID != epoch.id:
                    removeCorrupt(name: name, in: folder, status: status, reason: .oldEpoch)
                case .success(let header):
                    guard let expiresAt = header.expiresAt, now >= expiresAt,
                        removeIfUnchangedAndForget(name, in: folder, status: status)
                    else { continue }
                    removed += 1
                    count { $0.expirations += 1 }
                }
            }
            return removed
        }
    }

    // MARK: - Statistics

    /// Persisted counters plus this process's unflushed ones.
    func statistics() -> CacheStatistics {
        let pending = state.withLock { $0.pending }
        let (persisted, isClean) = readStatisticsFile()
        if !isClean && !isReadOnly {
            // Statistics are advisory: damaged counters counted as zero, and the file is written again clean.
            try? flushStatistics(force: true)
        }
        let total = persisted + pending
        return CacheStatistics(
            hits: total.hits, misses: total.misses, insertions: total.insertions, evictions: total.evictions,
            expirations: total.expirations, corruptEntriesRemoved: total.corruptEntriesRemoved,
            errors: total.readFailures)
    }

    /// The index's totals: the entry files held and their real sizes in bytes, scanning the folder first
    /// when this process has no index yet.
    func totals() -> (count: Int, bytes: Int) {
        do {
            // Totals that silently leave out what could not be read would mislead: each foreign item (a
            // link or a file at a fan-out folder's name) and a folder that cannot be read is reported.
            try ensureIndex { path, status in
                self.report(
                    .readFailed, "an item the store did not create sits in the entries folder; it was left in place",
                    path: path,
                    error: CacheError(.io, "\(status.kind) the store did not create", path: path))
            }
        } catch {
            let failure = (error as? FileError)?.cacheError ?? error
            report(
                .readFailed, "cannot scan the store for its size; the totals leave out what could not be read",
                path: (failure as? CacheError)?.path ?? layout.entriesFolder, error: failure)
        }
        return state.withLock { ($0.index?.count ?? 0, $0.index?.totalBytes ?? 0) }
    }

    /// The counters in `store.stats` (zero when it is missing), and whether the file was clean (absent or
    /// well-formed). It is opened without following a link and without blocking, must be a regular file of
    /// at most ``StatisticsFile/maxSize`` bytes, and is never read whole beyond that.
    func readStatisticsFile() -> (counters: StatisticsCounters, isClean: Bool) {
        guard let root = try? folders().root else { return (StatisticsCounters(), true) }
        let fd: Int32
        do {
            fd = try root.openFile(StoreLayout.statisticsName, O_RDONLY)
        } catch {
            return (StatisticsCounters(), error.isNotFound)
        }
        defer { FileSystem.closeFile(fd) }
        guard let status = try? FileSystem.status(of: fd, path: layout.statisticsFile), status.isRegularFile,
            status.size <= StatisticsFile.maxSize,
            let data = try? FileSystem.readSmallFile(fd, count: status.size, path: layout.statisticsFile)
        else { return (StatisticsCounters(), false) }
        return StatisticsFile.decode(data)
    }

    /// Merges this process's counters into `store.stats` under `store.lock`.
    ///
    /// Never creates anything: when the store folder (or its lock file or `tmp/`) is gone — deleted from
    /// outside — the counts stay pending, so a flush from `deinit` cannot resurrect a deleted store.
    ///
    /// - Parameter force: Write the file even with nothing to add (to replace damaged contents).
    func flushStatistics(force: Bool = false) throws {
        try translatingErrors {
            let snapshot = state.withLock { $0.pending }
            // Counters are advisory: a store opened read-only keeps them in memory, without an error.
            guard !snapshot.isZero || force, !isReadOnly else { return }
            let lock: FileLock?
            let root: Directory
            do {
                root = try folders().root
                lock = try storeLock(in: try folders(), creating: false)
            } catch  where FileError.isNotFound(error) {
                return
            }
            defer { release(lock) }
            let merged = readStatisticsFile().counters + snapshot
            do {
                try writeAtomically(
                    try StatisticsFile.encode(merged), in: root, name: StoreLayout.statisticsName, modified: nil,
                    replacing: true)
            } catch  where FileError.isNotFound(error) {
                return
            }
            state.withLock { $0.pending = $0.pending - snapshot }
        }
    }
}

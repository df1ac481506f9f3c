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

// Accounting and trimming on disk: the folder scans that build the index (StoreAccounting.swift), the
// trims that enforce its limits, and the statistics counters persisted in `store.stats`.
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
        guard let generation = accounting.beginScanIfMissing() else { return }
        let scan: [String: (size: Int, modified: Date)]
        do {
            scan = try scanEntries(foreignItem: foreignItem)
        } catch {
            accounting.endScan()
            throw error
        }
        accounting.finishScan(scan, generation: generation, onlyIfMissing: true)
    }

    func lowWater(_ limit: Int) -> Int {
        StoreAccounting.Limits.lowWater(limit, configuration.lowWaterFraction)
    }

    /// After a write: when a limit is exceeded, trims to the low-water marks, sparing `protected`.
    func enforceLimits(protecting protected: String?) throws {
        let limits = StoreAccounting.Limits(bytes: configuration.byteLimit, count: configuration.countLimit)
        guard !limits.isEmpty else { return }
        try ensureIndex()
        guard accounting.exceeds(limits) else { return }
        let target = limits.lowWater(configuration.lowWaterFraction)
        try trim(toBytes: target.bytes, toCount: target.count, protecting: protected)
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
            let generation = accounting.beginScan()
            let scan: [String: (size: Int, modified: Date)]
            do {
                scan = try scanEntries()
            } catch {
                accounting.endScan()
                throw error
            }
            // A wipe ran meanwhile: there is nothing left to trim.
            guard let index = accounting.finishScan(scan, generation: generation, onlyIfMissing: false) else {
                return 0
            }
            let target = StoreAccounting.Limits(bytes: bytes, count: count)
            var heldCount = index.count
            var heldBytes = index.totalBytes
            var removed = 0
            for name in index.leastRecentlyUsedFirst() {
                guard target.areExceeded(count: heldCount, bytes: heldBytes) else { break }
                guard name != protected, let size = scan[name]?.size,
                    let folder = try? fanOutFolder(for: name, in: try folders(), creating: false),
                    withNameLock(
                        name,
                        {
                            guard (try? folder.unlink(name)) != nil else { return false }
                            accounting.recordRemoval(name)
                            return true
                        })
                else { continue }
                heldBytes -= size
                heldCount -= 1
                removed += 1
            }
            accounting.count { $0.evictions += removed }
            return removed
        }
    }

    // MARK: - Statistics

    /// Persisted counters plus this process's unflushed ones.
    func statistics() -> CacheStatistics {
        let pending = accounting.pending
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
        return accounting.totals
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
            let snapshot = accounting.pending
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
            accounting.subtractPending(snapshot)
        }
    }
}

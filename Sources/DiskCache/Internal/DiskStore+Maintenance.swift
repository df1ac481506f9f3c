import CacheCore
import Foundation

// Maintenance: reading every entry to verify it, and sweeping expired, corrupt and stale files.
extension DiskStore {
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
            try EntryRecord.open(contents, count: count, fileName: name, epochID: epoch.id, key: epoch.sealingSubkey)
        }
        switch outcome {
        case .failure(let reason):
            return .corrupt(reason, status, folder)
        case .success(let record):
            guard try fileName(for: record.keyBytes) == name else { return .corrupt(.misplaced, status, folder) }
            if let retainedUntil = record.header.retainedUntil, now >= retainedUntil { return .expired(status, folder) }
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
                    guard let retainedUntil = header.retainedUntil, now >= retainedUntil,
                        removeIfUnchangedAndForget(name, in: folder, status: status)
                    else { continue }
                    removed += 1
                    count { $0.expirations += 1 }
                }
            }
            return removed
        }
    }
}

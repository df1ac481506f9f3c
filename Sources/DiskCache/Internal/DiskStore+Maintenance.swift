import CacheCore
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Maintenance: reading every entry to verify it, and sweeping expired, corrupt and stale files (an older
// key epoch, or a tag removed since the entry was stamped).
extension DiskStore {
    // MARK: - Sweeps

    /// What one entry file holds, after full authentication.
    enum Inspection {
        case live(EntryRecord, FileStatus, Directory)
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
            // Header-only (tags are judged by the sweep): expired once past any stale window, as a read judges.
            switch record.header.stamp().liveness(currentEpoch: epoch.id, currentTagVersions: [:], at: now) {
            case .expired: return .expired(status, folder)
            case .wrongEpoch: return .corrupt(.oldEpoch, status, folder)
            case .live, .servableStale, .fencedByTag: return .live(record, status, folder)
            }
        }
    }

    /// Visits every entry file, fully authenticated; removes corrupt and expired ones, and tagged ones whose
    /// tag was removed since they were stamped.
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
            let tagsRemoved = hasTagCounters()
            var tagVersions: [String: UInt64] = [:]
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
                case .live(let record, let status, let folder):
                    guard record.header.hasTags, tagsRemoved else {
                        visit(record, status)
                        continue
                    }
                    switch checkTags(of: record, known: &tagVersions) {
                    case .current, .unknown:
                        visit(record, status)
                    case .malformed:
                        removeCorrupt(name: name, in: folder, status: status, reason: .badTagBlock)
                        issues.append(.init(path: path, reason: CorruptionReason.badTagBlock.rawValue))
                    case .stale:
                        if removeIfUnchangedAndForget(name, in: folder, status: status) {
                            issues.append(.init(path: path, reason: DiskCacheVerifyReport.Issue.tagRemovedReason))
                        }
                    }
                case .expired(let status, let folder):
                    if removeIfUnchangedAndForget(name, in: folder, status: status) {
                        count { $0.expirations += 1 }
                        issues.append(.init(path: path, reason: DiskCacheVerifyReport.Issue.expiredReason))
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

    /// Removes expired and old-epoch entries, reading only each file's header (no decryption), and tagged
    /// entries whose tag was removed since they were stamped (the stamps are inside the ciphertext, so a
    /// tagged entry is opened in full, and only once some tag was ever removed in this store).
    ///
    /// - Returns: How many expired and tag-stale entries were removed (old-epoch files count as corrupt).
    func removeExpired() throws -> Int {
        try translatingErrors {
            let epoch = try currentEpoch(recreating: false)
            let now = clock.now
            let tagsRemoved = hasTagCounters()
            var tagVersions: [String: UInt64] = [:]
            var removed = 0
            for name in try scanEntries().keys {
                guard let (fd, folder) = try? openEntryFile(name) else { continue }
                defer { FileSystem.closeFile(fd) }
                let path = layout.entry(name)
                guard let status = try? FileSystem.status(of: fd, path: path), status.isRegularFile,
                    let prefix = try? FileSystem.readPrefix(fd, count: EntryRecord.headerSize, path: path)
                else { continue }
                let header: EntryRecord.Header
                switch EntryRecord.parseHeader(prefix) {
                case .failure(let reason):
                    removeCorrupt(name: name, in: folder, status: status, reason: reason)
                    continue
                case .success(let parsed):
                    header = parsed
                }
                // The kernel's liveness rule on the header alone; tagged records are then opened for their stamps.
                switch header.stamp().liveness(currentEpoch: epoch.id, currentTagVersions: [:], at: now) {
                case .wrongEpoch:
                    removeCorrupt(name: name, in: folder, status: status, reason: .oldEpoch)
                case .expired:
                    guard removeIfUnchangedAndForget(name, in: folder, status: status) else { continue }
                    removed += 1
                    count { $0.expirations += 1 }
                case .live, .servableStale, .fencedByTag:
                    if header.hasTags, tagsRemoved, removeIfStaleByTag(name, epoch: epoch, now: now, &tagVersions) {
                        removed += 1
                    }
                }
            }
            return removed
        }
    }

    /// Opens the tagged entry `name` in full and removes it when a tag was removed since it was stamped
    /// (a malformed tag block is removed as corrupt); `true` when it was removed as stale.
    private func removeIfStaleByTag(
        _ name: String, epoch: Epoch, now: Date, _ tagVersions: inout [String: UInt64]
    ) -> Bool {
        guard case .live(let record, let status, let folder)? = try? inspect(name, epoch: epoch, now: now) else {
            return false  // gone, expired meanwhile, corrupt (the next read or verify handles it) or unreadable
        }
        switch checkTags(of: record, known: &tagVersions) {
        case .current, .unknown:
            return false
        case .malformed:
            removeCorrupt(name: name, in: folder, status: status, reason: .badTagBlock)
            return false
        case .stale:
            return removeIfUnchangedAndForget(name, in: folder, status: status)
        }
    }
}

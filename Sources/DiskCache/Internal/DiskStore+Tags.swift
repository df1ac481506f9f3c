import CacheCore
import CacheCrypto
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

// Tag version counters on disk (Docs/Tags.md, "In the disk tier"): one small sealed file per tag in `tags/`
// (TagCounters.swift), read afresh on every use so a removal by another process or instance counts at
// once, and advanced under `store.lock` by an atomic rename.
extension DiskStore {
    /// The current version of each of `tags` for judging a record: a tag whose counter file is missing is
    /// left out, so it matches no stamp (the counter rule, `FenceCounter`; Docs/DiskFormat.md, "Tags").
    ///
    /// - Throws: `CacheError` `.corruptEntry` when a counter file is damaged or tampered with (reported to
    ///   the observer as `corruptEntryKept`; the file is left in place), or the file-system error.
    func currentTagVersions(of tags: some Sequence<String>) throws -> [String: UInt64] {
        try translatingErrors {
            let folder = try tagsFolder(creating: false)
            var versions: [String: UInt64] = [:]
            for tag in tags where versions[tag] == nil {
                let name = try tagCounters.fileName(of: tag)
                if let version = try existingCounter(name: name, in: folder) { versions[tag] = version }
            }
            return versions
        }
    }

    /// The versions to stamp `tags` with: the current ones, a missing counter file created at a fresh random
    /// base first (a stamp is only ever taken from a counter that exists, so a lost counter can never repeat
    /// a stamped value). The file is linked into place only if the name is free: a removal or another writer
    /// that created it first wins, and its version is the one returned.
    ///
    /// - Throws: `CacheError` `.corruptEntry` for a damaged counter (reported, left in place); `.readOnly`
    ///   when a counter is missing and the store was opened read-only; the file-system error.
    func tagVersions(of tags: some Sequence<String>) throws -> [String: UInt64] {
        let tags = Array(tags)
        var versions = try currentTagVersions(of: tags)
        let missing = tags.filter { versions[$0] == nil }
        guard !missing.isEmpty else { return versions }
        try translatingErrors {
            try requireWritable("create the version counter of a tag")
            guard let folder = try tagsFolder(creating: true) else { return }
            for tag in missing where versions[tag] == nil {
                let name = try tagCounters.fileName(of: tag)
                try writeAtomically(
                    try tagCounters.seal(FenceCounter.freshBase(), name: name), in: folder, name: name, modified: nil,
                    replacing: false)
                guard let version = try existingCounter(name: name, in: folder) else {
                    throw CacheError(
                        .io, "the version counter of a tag was deleted as it was created",
                        path: layout.root + "/" + TagCounters.folderName + "/" + name)
                }
                versions[tag] = version
            }
        }
        return versions
    }

    /// The version in the counter file `name`, or `nil` when there is none; a damaged counter is reported
    /// and thrown as `.corruptEntry`.
    private func existingCounter(name: String, in folder: Directory?) throws -> UInt64? {
        switch try readCounter(name: name, in: folder) {
        case .missing:
            return nil
        case .version(let version):
            return version
        case .damaged:
            let path = layout.root + "/" + TagCounters.folderName + "/" + name
            report(.corruptEntryKept, "a tag's version counter is damaged; its entries are misses", path: path)
            throw CacheError(.corruptEntry, "the version counter of a tag is damaged or was tampered with", path: path)
        }
    }

    /// Adds one to `tag`'s counter under `store.lock`, so every entry stamped with the old version is a miss
    /// for every process sharing the folder. A missing counter is created at a fresh random base (never 1:
    /// counting again from 0 would reach the versions of entries removed before the counter was lost), and a
    /// damaged one is replaced by a fresh base too (reported): no stamp can be trusted to differ from a value
    /// that cannot be read, and a fresh base differs from every stamp but with negligible probability.
    ///
    /// - Throws: `CacheError` `.readOnly`, or the file-system error (the counter is then unchanged).
    func advanceTagVersion(of tag: String) throws {
        try translatingErrors {
            try requireWritable("remove a tag's entries")
            let folders = try folders()
            let lock = try storeLock(in: folders)
            defer { release(lock) }
            guard let folder = try tagsFolder(creating: true) else { return }
            let name = try tagCounters.fileName(of: tag)
            let next: UInt64
            switch try readCounter(name: name, in: folder) {
            case .version(let current):
                next = FenceCounter.advanced(from: current)
            case .missing:
                next = FenceCounter.advanced(from: nil)
            case .damaged:
                report(
                    .corruptEntryKept, "a tag's version counter was damaged; it was replaced by a random version",
                    path: layout.root + "/" + TagCounters.folderName + "/" + name)
                next = FenceCounter.advanced(from: nil)
            }
            try writeAtomically(
                try tagCounters.seal(next, name: name), in: folder, name: name, modified: nil, replacing: true)
        }
    }

    /// Whether any tag was ever removed in this store (its `tags/` folder exists). Only then can a tagged
    /// entry be stale by tag, so the sweeps decrypt tagged entries only then.
    ///
    /// A `tags` item that cannot be opened as a folder (a file or a link in its place, a permission error)
    /// counts as present: the sweeps then find each tagged entry's counters unreadable and leave it alone
    /// (reads report it), and go on with every other entry rather than fail as a whole.
    func hasTagCounters() -> Bool {
        do {
            return try tagsFolder(creating: false) != nil
        } catch {
            return true
        }
    }

    /// What a sweep finds about an opened tagged record.
    enum TagCheck {
        /// Every stamped version is current.
        case current
        /// A tag was removed since the entry was stamped: the entry is a miss for good.
        case stale
        /// The tag block does not parse (it was authenticated, so a writer's bug or a newer format).
        case malformed
        /// A counter could not be read or is damaged: leave the entry alone (reads report it).
        case unknown
    }

    /// Compares the versions stamped in the tagged, opened `record` (its tag block still leading the value
    /// bytes) with the tags' counters. `known` caches the counters read during one sweep; a stamp that
    /// differs from the cached version is checked against a fresh read before the entry is called stale,
    /// so a tag removed by another process during the sweep never makes a newer entry look stale.
    func checkTags(of record: EntryRecord, known: inout [String: UInt64]) -> TagCheck {
        guard let (stamped, _) = TagBlock.decode(record.valueBytes) else { return .malformed }
        let unread = stamped.keys.filter { known[$0] == nil }
        if !unread.isEmpty {
            guard let read = try? currentTagVersions(of: unread) else { return .unknown }
            known.merge(read) { $1 }
        }
        let differing = stamped.filter { known[$0.key] != $0.value }
        guard !differing.isEmpty else { return .current }
        guard let fresh = try? currentTagVersions(of: differing.keys) else { return .unknown }
        known.merge(fresh) { $1 }
        return RecordStamp.tagsAreCurrent(differing, in: fresh) ? .current : .stale
    }

    /// The `tags/` folder, created when `creating`; `nil` when it does not exist (no tag was ever removed).
    private func tagsFolder(creating: Bool) throws -> Directory? {
        let root = try folders().root
        do {
            return try root.directory(TagCounters.folderName)
        } catch  where error.isNotFound {
            guard creating else { return nil }
            try root.makeDirectory(TagCounters.folderName)
            return try root.directory(TagCounters.folderName)
        }
    }

    /// What a counter file holds.
    private enum CounterReading {
        /// No file (or no `tags/` folder): the tag has no counter, which matches no stamp.
        case missing
        /// Not a regular file of the right size, or its MAC fails.
        case damaged
        /// A counter this store's master key sealed for that name.
        case version(UInt64)
    }

    /// Reads the counter file `name`, opened without following a link or blocking.
    private func readCounter(name: String, in folder: Directory?) throws -> CounterReading {
        guard let folder else { return .missing }
        let fd: Int32
        do {
            fd = try folder.openFile(name, O_RDONLY)
        } catch {
            // One catch that sorts the error: this toolchain's ownership checker crashed on `catch where`
            // clauses in a function returning this enum.
            if error.isNotFound { return .missing }
            if error.isForeignItem { return .damaged }
            throw error
        }
        defer { FileSystem.closeFile(fd) }
        let status = try FileSystem.status(of: fd, path: name)
        guard status.isRegularFile, status.size == TagCounters.fileSize else { return .damaged }
        let data = try FileSystem.readSmallFile(fd, count: TagCounters.fileSize, path: name)
        guard let version = try tagCounters.open(data, name: name) else { return .damaged }
        return .version(version)
    }
}

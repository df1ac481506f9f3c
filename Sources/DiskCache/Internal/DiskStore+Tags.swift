import CacheCore
import CacheCrypto
import Foundation
import SealedRecord

// Tag version counters on disk (Docs/Tags.md, "In the disk tier"): one small sealed file per tag in `tags/`
// (TagCounters.swift), read afresh on every use so a removal by another process or instance counts at
// once, and advanced under `store.lock` by an atomic rename.
extension DiskStore {
    /// The current version of each of `tags` (0 for a tag never removed).
    ///
    /// - Throws: `CacheError` `.corruptEntry` when a counter file is damaged or tampered with (reported to
    ///   the observer as `corruptEntryKept`; the file is left in place), or the file-system error.
    func tagVersions(of tags: some Sequence<String>) throws -> [String: UInt64] {
        try translatingErrors {
            let folder = try tagsFolder(creating: false)
            var versions: [String: UInt64] = [:]
            for tag in tags where versions[tag] == nil {
                let name = try tagCounters.fileName(of: tag)
                guard let version = try readCounter(name: name, in: folder) else {
                    let path = layout.root + "/" + TagCounters.folderName + "/" + name
                    report(
                        .corruptEntryKept, "a tag's version counter is damaged; its entries are misses", path: path)
                    throw CacheError(
                        .corruptEntry, "the version counter of a tag is damaged or was tampered with", path: path)
                }
                versions[tag] = version
            }
            return versions
        }
    }

    /// Adds one to `tag`'s counter under `store.lock`, so every entry stamped with the old version is a miss
    /// for every process sharing the folder. A damaged counter is replaced by a random version (reported):
    /// no stamp can be trusted to differ from a value that cannot be read, and a random 64-bit one differs
    /// from every stamp but with negligible probability.
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
            if let current = try readCounter(name: name, in: folder) {
                next = current &+ 1
            } else {
                report(
                    .corruptEntryKept, "a tag's version counter was damaged; it was replaced by a random version",
                    path: layout.root + "/" + TagCounters.folderName + "/" + name)
                next = try CryptoBackend.randomBytes(count: 8).reduce(0) { $0 << 8 | UInt64($1) }
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
            guard let read = try? tagVersions(of: unread) else { return .unknown }
            known.merge(read) { $1 }
        }
        let differing = stamped.filter { known[$0.key] != $0.value }
        guard !differing.isEmpty else { return .current }
        guard let fresh = try? tagVersions(of: differing.keys) else { return .unknown }
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

    /// The version in the counter file `name`: 0 when there is none, `nil` when it is damaged (not a regular
    /// file of the right size, or its MAC fails). Opened without following a link or blocking.
    private func readCounter(name: String, in folder: Directory?) throws -> UInt64? {
        guard let folder else { return 0 }
        let fd: Int32
        do {
            fd = try folder.openFile(name, O_RDONLY)
        } catch  where error.isNotFound {
            return 0
        } catch  where error.isForeignItem {
            return nil
        }
        defer { FileSystem.closeFile(fd) }
        let status = try FileSystem.status(of: fd, path: name)
        guard status.isRegularFile, status.size == TagCounters.fileSize else { return nil }
        let data = try FileSystem.readSmallFile(fd, count: TagCounters.fileSize, path: name)
        return try tagCounters.open(data, name: name)
    }
}

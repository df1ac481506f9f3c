import CacheCore
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DiskCache: TagVersioningCache {
    // MARK: - Synchronous (file I/O on the caller's thread)

    /// Makes every entry carrying `tag` a miss, for every instance and process sharing the store folder:
    /// one atomic rewrite of the tag's version counter file (`tags/<HMAC of the tag>`) under the store's
    /// `flock`.
    ///
    /// Entries stamped with the older version stay on disk until a read finds them (and removes them),
    /// eviction takes them, or they expire. Counters are never reset, not even by `removeAll()`.
    ///
    /// - Parameter tag: The tag to remove: any string, the empty one included, of at most 65,535 bytes of UTF-8
    ///   (the tag rule of every sealing tier, Docs/Tags.md).
    /// - Throws: `CacheError` `.invalidArgument` for a tag over 65,535 bytes of UTF-8 (nothing is written);
    ///   `.readOnly` when the store was opened read-only, or the file-system error
    ///   (`.io`, `.permissionDenied`, `.outOfSpace`) when the counter cannot be written (it is then
    ///   unchanged); `.crypto` when the back end fails.
    /// - Complexity: O(1) however many entries carry the tag: one `flock`, one 40-byte read and one atomic
    ///   write of 40 bytes (with `.fsync` durability, plus its flushes).
    ///
    /// Thread-safe.
    public func removeAll(taggedWith tag: String) throws {
        try TagBlock.validate(tag)
        return try loadOnce.fenced(nil) { try engine.advanceTagVersion(of: tag) }
    }

    /// Reads the current version of each of `tags` from their counter files, creating a missing one at a fresh
    /// random base (a stamp is only ever taken from a counter that exists; Docs/DiskFormat.md, "Tags").
    ///
    /// - Parameter tags: The tags to read.
    /// - Returns: The versions.
    /// - Throws: `CacheError` `.invalidArgument` for a tag over 65,535 bytes of UTF-8 or more than 65,535
    ///   tags (Docs/Tags.md, "The tag rule"); `.corruptEntry` when a counter file is damaged or was tampered
    ///   with (also reported to the observer), or the file-system error.
    /// - Complexity: One open and a 40-byte read per tag, plus one 40-byte atomic write per missing counter.
    ///
    /// Thread-safe.
    public func tagVersions(for tags: Set<String>) throws -> CacheTagVersions {
        try TagBlock.validate(tags)
        return CacheTagVersions(try engine.tagVersions(of: tags))
    }

    /// Stores `entry` under `key` stamped with the tag versions `versions` (read by `tagVersions(for:)`
    /// before a load): when a tag was removed since, the entry is dead on arrival, so it is not stored and
    /// the earlier entry for `key` is removed.
    ///
    /// - Parameters:
    ///   - entry: The entry, with its tags.
    ///   - key: The key.
    ///   - versions: A snapshot from `tagVersions(for:)`; a tag it lacks is stamped with its current version.
    /// - Throws: What `setEntry(_:forKey:)` throws.
    /// - Complexity: That of `setEntry(_:forKey:)` (which reads the tags' counters as well).
    ///
    /// Thread-safe.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key, taggedAt versions: CacheTagVersions) throws {
        try write(entry, forKey: key, taggedAt: versions)
    }

    // MARK: - Async (file I/O on the I/O queue)

    /// ``removeAll(taggedWith:)-(String)`` without blocking the cooperative thread pool.
    ///
    /// - Parameter tag: The tag to remove.
    /// - Throws: What the synchronous form throws, or `CancellationError` before it started.
    /// - Complexity: O(1) in tagged entries; one counter file write, run on the I/O queue.
    public func removeAll(taggedWith tag: String) async throws {
        try await onIOQueue { try self.removeAll(taggedWith: tag) as Void }
    }

    /// ``tagVersions(for:)-(Set<String>)`` without blocking the cooperative thread pool.
    ///
    /// - Parameter tags: The tags to read.
    /// - Returns: The versions.
    /// - Throws: What the synchronous form throws, or `CancellationError` before it started.
    /// - Complexity: One small file read per tag, run on the I/O queue.
    public func tagVersions(for tags: Set<String>) async throws -> CacheTagVersions {
        try await onIOQueue { try self.tagVersions(for: tags) as CacheTagVersions }
    }

    /// ``setEntry(_:forKey:taggedAt:)-(_,_,CacheTagVersions)`` without blocking the cooperative thread pool.
    ///
    /// - Parameters:
    ///   - entry: The entry, with its tags.
    ///   - key: The key.
    ///   - versions: A snapshot from `tagVersions(for:)`.
    /// - Throws: What the synchronous form throws, or `CancellationError` before it started.
    /// - Complexity: That of the synchronous form, run on the I/O queue.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key, taggedAt versions: CacheTagVersions) async throws
    {
        try await onIOQueue { try self.setEntry(entry, forKey: key, taggedAt: versions) as Void }
    }

    // MARK: - Writing

    /// Stores `entry`, stamping a tagged one with `snapshot` (its current versions where `snapshot` is `nil`
    /// or lacks a tag). A tagged entry whose snapshot is behind a counter is not stored and removes the
    /// earlier entry, as does one whose counters cannot be read. Tags that break the tag rule are refused
    /// with `.invalidArgument` before anything is read or written (the earlier entry stays).
    func write(_ entry: CacheEntry<Value>, forKey key: Key, taggedAt snapshot: CacheTagVersions?) throws {
        let prepared: PreparedWrite
        do {
            prepared = try prepareWrite(entry, forKey: key, taggedAt: snapshot)
        } catch let error as UnreadableTagVersions {
            try? removeEntry(forKey: key)
            throw error.cause
        }
        try loadOnce.fenced(key) { try perform(prepared) }
    }

    /// What a write of one entry does to the store, worked out before any fence or gate is taken: the codec
    /// and the tags' counters are read here.
    enum PreparedWrite {
        /// Write the sealed record.
        case write(keyBytes: Data, valueBytes: Data, expiresAt: Date?, cost: Int?, staleUntil: Date?, hasTags: Bool)
        /// The entry is dead on arrival (a tag removed since its snapshot): remove the earlier entry.
        case remove(keyBytes: Data)
    }

    /// A tag's counters could not be read: the write stores nothing, and a plain write removes the earlier
    /// entry.
    struct UnreadableTagVersions: Error {
        let cause: any Error
    }

    /// Encodes `entry` and stamps its tags with `snapshot` (see ``write(_:forKey:taggedAt:)``).
    ///
    /// - Throws: `.invalidArgument` for tags that break the tag rule, the codec's error,
    ///   ``UnreadableTagVersions`` when the tags' counters cannot be read.
    func prepareWrite(
        _ entry: CacheEntry<Value>, forKey key: Key, taggedAt snapshot: CacheTagVersions?
    ) throws -> PreparedWrite {
        try TagBlock.validate(entry.tags)
        let keyBytes = try canonicalBytes(of: key)
        var valueBytes = try encode(entry.value)
        if !entry.tags.isEmpty {
            let current: [String: UInt64]
            do {
                current = try engine.tagVersions(of: entry.tags)
            } catch {
                throw UnreadableTagVersions(cause: error)
            }
            // The engine returns a version for every tag or throws; an engine that left one out would write an
            // entry that no removal of that tag reaches.
            guard entry.tags.allSatisfy({ current[$0] != nil }) else {
                throw UnreadableTagVersions(
                    cause: CacheError(.io, "the store returned no version counter for a tag of the entry"))
            }
            var stamped = current
            for tag in entry.tags { if let version = snapshot?.versions[tag] { stamped[tag] = version } }
            // A tag removed since the snapshot: the entry is dead on arrival, and the earlier one must go too.
            guard stamped == current else { return .remove(keyBytes: keyBytes) }
            valueBytes = try TagBlock.encode(stamped) + valueBytes
        }
        return .write(
            keyBytes: keyBytes, valueBytes: valueBytes, expiresAt: entry.expiresAt, cost: entry.cost,
            staleUntil: entry.staleUntil, hasTags: !entry.tags.isEmpty)
    }

    /// Carries out a prepared write: file I/O only, no caller code, so it may run under a fence or the store
    /// gate.
    func perform(_ prepared: PreparedWrite) throws {
        switch prepared {
        case .write(let keyBytes, let valueBytes, let expiresAt, let cost, let staleUntil, let hasTags):
            try engine.write(
                keyBytes: keyBytes, valueBytes: valueBytes, expiresAt: expiresAt, cost: cost, staleUntil: staleUntil,
                hasTags: hasTags)
        case .remove(let keyBytes):
            try engine.remove(keyBytes: keyBytes)
        }
    }
}

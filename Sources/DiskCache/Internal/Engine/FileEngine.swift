import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The file-per-entry engine: one sealed file per record under `entries/`, named by the key's HMAC,
/// replaced by rename, recency in the file's modification time, totals in an in-process index built by a
/// folder scan (Docs/DiskFormat.md, Docs/DiskCache.md).
///
/// A thin adapter: the engine itself is ``DiskStore`` and its extensions, unchanged; this type maps the
/// ``StorageEngine`` requirements onto them, so that seam's names never clash with the store's own
/// helpers (`trim(toBytes:toCount:protecting:)`, `removeAll(deletingEntries:)`, …) that tests call.
///
/// Thread safety: `Sendable`; it holds only the store, itself `Sendable`, whose methods may be called
/// from any thread.
final class FileEngine: StorageEngine {
    /// The store this engine runs; tests reach its files through it (``DiskCache/store``).
    let store: DiskStore

    /// Opens (creating if needed) the file store `configuration` describes.
    ///
    /// - Parameter configuration: The store's folder, limits, master-key source and clock.
    /// - Throws: What ``DiskCache/init(configuration:codec:)`` documents.
    /// - Complexity: A few small files, plus one listing of `tmp/`; independent of the number of entries.
    init(configuration: DiskCacheConfiguration) throws {
        store = try DiskStore(configuration: configuration)
    }

    // MARK: - Records

    func read(keyBytes: Data, includingStale: Bool) throws -> EntryRecord? {
        try store.read(keyBytes: keyBytes, includingStale: includingStale)
    }

    func write(
        keyBytes: Data, valueBytes: Data, expiresAt: Date?, cost: Int?, staleUntil: Date?, hasTags: Bool
    ) throws {
        try store.write(
            keyBytes: keyBytes, valueBytes: valueBytes, expiresAt: expiresAt, cost: cost, staleUntil: staleUntil,
            hasTags: hasTags)
    }

    func remove(keyBytes: Data) throws {
        try store.remove(keyBytes: keyBytes)
    }

    func removeAll() throws {
        try store.removeAll()
    }

    func removeAll(progress: (_ done: Int, _ total: Int) -> Void) throws {
        // The store takes an optional (so escaping) callback; it calls it only before it returns.
        try withoutActuallyEscaping(progress) { try store.removeAll(progress: $0) }
    }

    // MARK: - Listing and maintenance

    func verify(
        progress: ((Int, Int) -> Void)?, visit: (EntryRecord, StoredEntryFacts) -> Void
    ) throws -> DiskCacheVerifyReport {
        try store.sweep(progress: progress) { record, status in
            visit(record, StoredEntryFacts(size: status.size, lastAccess: status.modificationDate))
        }
    }

    func removeExpired() throws -> Int {
        try store.removeExpired()
    }

    func trim(toBytes bytes: Int?, toCount count: Int?) throws -> Int {
        try store.trim(toBytes: bytes, toCount: count)
    }

    func applyLimits() throws {
        try store.enforceLimits(protecting: nil)
    }

    func lowWater(_ limit: Int) -> Int {
        store.lowWater(limit)
    }

    // MARK: - Totals and statistics

    func totals() -> (count: Int, bytes: Int) {
        store.totals()
    }

    func statistics() -> CacheStatistics {
        store.statistics()
    }

    func flushStatistics() throws {
        try store.flushStatistics()
    }

    // MARK: - Tags

    func tagVersions(of tags: Set<String>) throws -> [String: UInt64] {
        try store.tagVersions(of: tags)
    }

    func advanceTagVersion(of tag: String) throws {
        try store.advanceTagVersion(of: tag)
    }

    // MARK: - Coordination

    var isReadOnly: Bool { store.isReadOnly }

    func withKeyLock<R>(keyBytes: Data, wait: Bool, _ body: () throws -> R) throws -> R? {
        try store.withKeyLock(keyBytes: keyBytes, wait: wait, body)
    }

    func deferringEvents<T>(_ body: () throws -> T) rethrows -> T {
        try store.deferringEvents(body)
    }

    func report(_ kind: CacheEvent.Kind, _ message: String, path: String?, error: (any Error)?) {
        store.report(kind, message, path: path, error: error)
    }
}

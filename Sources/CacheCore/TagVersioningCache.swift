/// A snapshot of one tier's tag version counters, taken before a load runs so that the entry the load
/// stores is stamped with the versions that held when it started (Docs/Tags.md, "Fencing").
///
/// The numbers are the tier's own: a memory tier's in-process counters, a disk store's counter files, a
/// Redis namespace's `INCR`-ed keys. A snapshot is only ever handed back to the tier that took it.
///
/// Thread safety: a plain value; `Sendable`.
public struct CacheTagVersions: Sendable, Hashable {
    /// The version of each tag when the snapshot was taken.
    public var versions: [String: UInt64]

    /// Creates a snapshot.
    ///
    /// - Parameter versions: The version of each tag.
    public init(_ versions: [String: UInt64] = [:]) {
        self.versions = versions
    }
}

/// A tier that can store an entry stamped with tag versions read earlier, so that a
/// `removeAll(taggedWith:)` that lands while a load runs — in this process or another one sharing the
/// tier — leaves the loaded entry already dead.
///
/// `MultiCache` and the tiers' own load-once calls discover it at run time
/// (`cache as? any TagVersioningCache<Key, Value>`); a tier that does not conform gets the entry through
/// `setEntry(_:forKey:)`, stamped with the versions current at that moment.
///
/// Thread safety: conformers are `Sendable`; every method may be called from any thread.
public protocol TagVersioningCache<Key, Value>: TagRemovingCache {
    /// Reads the current version of each of `tags`.
    ///
    /// - Parameter tags: The tags to read.
    /// - Returns: The versions, one per tag.
    /// - Throws: ``CacheError`` when the tier cannot be read.
    /// - Complexity: O(*t*) in the number of tags; the disk tier reads one small file per tag, the Redis
    ///   tier sends one `MGET`.
    func tagVersions(for tags: Set<String>) async throws -> CacheTagVersions

    /// Stores `entry` under `key` stamped with `versions` for its tags (the current version for a tag the
    /// snapshot lacks), replacing any earlier entry.
    ///
    /// When a tag's version has moved past the snapshot, the entry would be dead on arrival: it is not
    /// stored, and the earlier entry for `key` is removed, as for an entry that has already expired.
    ///
    /// - Parameters:
    ///   - entry: The entry, with its tags.
    ///   - key: The key to store it under.
    ///   - versions: A snapshot this tier returned from `tagVersions(for:)`.
    /// - Throws: What `setEntry(_:forKey:)` throws.
    func setEntry(_ entry: CacheEntry<Value>, forKey key: Key, taggedAt versions: CacheTagVersions) async throws
}

import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MemoryCache: TagVersioningCache {
    /// Stores `value` under `key` carrying `tags`; otherwise as ``setValue(_:forKey:expiry:)``.
    ///
    /// Thread-safe; takes the tag registry's lock once per tag, then the key's shard lock once.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - expiry: When the entry expires, resolved against ``clock`` now; `nil` for ``defaultExpiry``.
    ///   - tags: The entry's tags; ``removeAll(taggedWith:)`` with any of them makes it a miss.
    /// - Throws: ``CacheError/Code/entryTooLarge`` as ``setValue(_:forKey:expiry:)`` does.
    /// - Complexity: O(*t*) in the number of tags, plus that of ``setValue(_:forKey:expiry:)``.
    public func setValue(_ value: Value, forKey key: Key, expiry: Expiry? = nil, tags: Set<String>) throws {
        let expiresAt = (expiry ?? defaultExpiry).expirationDate(from: clock.now)
        try setEntry(CacheEntry(value: value, expiresAt: expiresAt, tags: tags), forKey: key)
    }

    /// Makes every entry carrying `tag` a miss by advancing the tag's version counter; the entries are
    /// dropped when a read finds them, by ``removeExpired()``, or by eviction.
    ///
    /// Thread-safe; takes the tag registry's lock once and no shard lock.
    ///
    /// - Parameter tag: The tag to remove.
    /// - Complexity: O(1), however many entries carry the tag.
    public func removeAll(taggedWith tag: String) {
        // Fenced like `removeAll()`: a load of any key in flight through this tier's load-once does not
        // store its result, since its entry might carry the tag.
        fenced(nil) { tagRegistry.advance(tag) }
    }

    /// Reads the current version of each of `tags` in this cache.
    ///
    /// Thread-safe; takes the tag registry's lock once per tag.
    ///
    /// - Parameter tags: The tags to read.
    /// - Returns: The versions.
    /// - Complexity: O(*t*) in the number of tags.
    public func tagVersions(for tags: Set<String>) -> CacheTagVersions {
        tagRegistry.versions(of: tags)
    }

    /// Stores `entry` stamped with the tag versions `versions`; when one of its tags was removed since,
    /// the entry is not stored and the earlier entry for `key` is removed.
    ///
    /// Thread-safe; locks like ``setEntry(_:forKey:)``.
    ///
    /// - Parameters:
    ///   - entry: The entry, with its tags.
    ///   - key: The key to store it under.
    ///   - versions: A snapshot from ``tagVersions(for:)``.
    /// - Throws: ``CacheError/Code/entryTooLarge`` as ``setEntry(_:forKey:)`` does.
    /// - Complexity: O(*t*) in the number of tags, plus that of ``setEntry(_:forKey:)``.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key, taggedAt versions: CacheTagVersions) throws {
        try setTaggedEntry(entry, forKey: key, taggedAt: versions)
    }

    /// Stores a tagged entry, stamped with `snapshot` (or the current versions when `nil`).
    @usableFromInline
    func setTaggedEntry(_ entry: CacheEntry<Value>, forKey key: Key, taggedAt snapshot: CacheTagVersions?) throws {
        let cost = max(entry.cost ?? costFunction(entry.value), 0)
        let stamp = tagRegistry.stamp(entry.tags, at: snapshot)
        if let expiresAt = entry.expiresAt {
            try store(
                entry.value, forKey: key, cost: cost, expiresAt: expiresAt.timeIntervalSinceReferenceDate,
                now: clock.now.timeIntervalSinceReferenceDate,
                staleUntil: entry.staleUntil?.timeIntervalSinceReferenceDate, tagStamp: stamp)
        } else {
            try store(entry.value, forKey: key, cost: cost, expiresAt: .infinity, now: -.infinity, tagStamp: stamp)
        }
    }
}

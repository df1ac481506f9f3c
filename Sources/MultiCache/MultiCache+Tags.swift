import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MultiCache: TagRemovingCache {
    /// Stores `value` under `key` in every tier carrying `tags`, with `expiry` resolved against ``clock``
    /// now; otherwise the same write as ``setEntry(_:forKey:)``.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - expiry: When it expires; `nil` for `.never` (each tier still caps it at its
    ///     ``Tier/maximumLifetime``).
    ///   - tags: The entry's tags; ``removeAll(taggedWith:)`` with any of them makes it a miss.
    /// - Throws: What ``setEntry(_:forKey:)`` throws.
    /// - Complexity: That of ``setEntry(_:forKey:)``.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func setValue(_ value: Value, forKey key: Key, expiry: Expiry? = nil, tags: Set<String>) async throws {
        let expiresAt = (expiry ?? .never).expirationDate(from: clock.now)
        try await setEntry(CacheEntry(value: value, expiresAt: expiresAt, tags: tags), forKey: key)
    }

    /// Makes every entry carrying `tag` a miss in every tier, concurrently.
    ///
    /// A tier that cannot remove by tag (not a `TagRemovingCache`) holds no tagged entry: a tagged write,
    /// write-back or load removes the key from it instead, so it has nothing to remove here.
    ///
    /// Each tier advances the tag's version counter (O(1) however many entries carry it); stale copies go
    /// when a read finds them or by eviction. Like ``removeAll()``, it fences every load and read in flight
    /// in this process — a loaded or read entry might carry the tag — and waits for stores already under
    /// way, so nothing read or loaded before this call reappears after it. Loads in other processes that
    /// share a tier are fenced by the version snapshot they took before loading
    /// (``value(forKey:expiry:tags:orLoad:)``).
    ///
    /// - Parameter tag: The tag whose entries to remove.
    /// - Throws: ``CacheError/Code/tierFailure`` naming each tier that threw; the other tiers have dropped
    ///   the tag's entries.
    /// - Complexity: O(*t*) tier calls for *t* tiers, each O(1) in the number of tagged entries.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func removeAll(taggedWith tag: String) async throws {
        await replayPendingWritesBeforeWriting()
        try await coordinator.fenced(nil) {
            // Under this fence, so the tiers' echoes of this removal need no fence of their own.
            awaitEchoes(ofRemovalOf: tag)
            let removed = await forEachTier(in: tiers.indices) { tier in try await tier.handle.removeAllTagged(tag) }
            settleEchoes(ofRemovalOf: tag, failures: removed)
            let failures = await keepPending(.removeAllTagged(tag), base: nil, failures: removed)
            try throwIfFailed(failures, "remove the entries tagged \"\(tag)\"")
        }
    }

    /// Load-once with tags: returns the cached value for `key` or loads it once, as
    /// ``value(forKey:expiry:orLoad:)`` does, and stores the loaded entry carrying `tags`.
    ///
    /// Before the loader runs, each tier's versions of `tags` are read; the entry is stored stamped with
    /// them. A `removeAll(taggedWith:)` of one of the tags that lands while the load runs — here, or in
    /// another process sharing the disk store or the Redis namespace, whatever its clock reads — has
    /// advanced the version by then, so the stored entry is already a miss in that tier. A tier whose
    /// versions could not be read does not get the entry.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - expiry: The loaded value's expiry, resolved against ``clock`` when the load finishes.
    ///   - tags: The tags of the loaded entry.
    ///   - load: Produces the value on a miss; runs at most once per key at a time.
    /// - Returns: The cached or loaded value.
    /// - Throws: What ``value(forKey:expiry:orLoad:)`` throws.
    /// - Complexity: That of ``value(forKey:expiry:orLoad:)``, plus one version read per tier before a load.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func value(
        forKey key: Key,
        expiry: Expiry = .never,
        tags: Set<String>,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await loadValue(forKey: key, expiry: expiry, tags: tags, options: LoadOptions(), orLoad: load)
    }
}

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
        await replayPendingWritesIfNeeded()
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
        guard !tags.isEmpty else { return try await value(forKey: key, expiry: expiry, orLoad: load) }
        // While a tier's invalidations are starting, a miss waits for them: a load begun now would be fenced.
        if let value = try await readBeforeLoadingDuringStart(key) { return value }
        let snapshot = Locked<[Int: CacheTagVersions?]>([:])
        return try await coordinator.value(
            forKey: key,
            read: { try await entry(forKey: key)?.value },
            recheck: { try? await self.entry(forKey: key)?.value },
            load: {
                // Read before the loader runs: a removal of a tag that lands later advances the versions
                // past this snapshot.
                let versions = await self.tagVersions(of: tags)
                snapshot.withLock { $0 = versions }
                return try await load()
            },
            store: { loadID, value in
                let versions = snapshot.withLock { $0 }
                await self.storeLoadedValue(
                    value, forKey: key, expiry: expiry, loadID: loadID, tags: tags, versions: versions)
            })
    }

    /// Each tier's versions of `tags`, by tier index: `nil` inside for a tier that keeps no versions, no
    /// element for a tier whose read failed.
    func tagVersions(of tags: Set<String>) async -> [Int: CacheTagVersions?] {
        var versions: [Int: CacheTagVersions?] = [:]
        for (index, tier) in tiers.enumerated() {
            // A tier that cannot say its versions does not get the entry: stamped with today's versions it
            // could outlive a removal that lands during the load.
            guard let read = try? await tier.handle.tagVersions(tags) else {
                if !tier.handle.isTagVersioning { versions[index] = .some(nil) }
                continue
            }
            versions[index] = .some(read)
        }
        return versions
    }

    /// Stores a tagged entry in the tiers of `versions`, each stamped with its own snapshot (a tier
    /// without versions through `setEntry(_:forKey:)`).
    func setEntry(
        _ entry: CacheEntry<Value>, forKey key: Key, taggedAt versions: [Int: CacheTagVersions?], now: Date
    ) async -> [CacheError.TierFailure] {
        await forEachIndexedTier(in: tiers.indices) { index, tier in
            guard let snapshot = versions[index] else { return }
            let capped = tier.capping(entry, now: now)
            if let snapshot {
                try await tier.handle.setEntryTaggedAt(capped, key, snapshot)
            } else {
                try await tier.handle.setEntry(capped, key)
            }
        }
    }
}

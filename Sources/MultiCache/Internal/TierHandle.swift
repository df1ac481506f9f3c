import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a ``MultiCache`` calls one tier, for reads and writes alike: closures formed where the tier was
/// created.
///
/// The tier's initializers are inlinable and generic over the cache type, so where that type is known the
/// compiler specializes them, and these closures, for it: a call runs the tier's specialized code rather
/// than the unspecialized witness that a call through `any Cache` reaches, which looks up generic metadata
/// at run time on every call. ``entryAtOnce`` is there only for a `SynchronousCache`, whose read needs no
/// `await`; a `MultiCache` uses it for its first tier.
@usableFromInline
struct TierHandle<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Reads an entry through the `async` API.
    @usableFromInline let entry: @Sendable (Key) async throws -> CacheEntry<Value>?
    /// Reads an entry without suspending; `nil` when the cache is not a `SynchronousCache`.
    @usableFromInline let entryAtOnce: (@Sendable (Key) -> CacheEntry<Value>?)?
    /// Reads a value without suspending or building its entry; `nil` when the cache is not a
    /// `SynchronousCache`.
    @usableFromInline let valueAtOnce: (@Sendable (Key) -> Value?)?
    /// Reads a value, its expiry and the clock reading it was live at, without suspending (a load with
    /// options, for refresh-ahead); `nil` when the cache is not a `SynchronousCache`.
    @usableFromInline let valueAndExpiryAtOnce: (@Sendable (Key) -> (value: Value, expiresAt: Double, now: Double)?)?
    /// Reads many values, and the keys missing, without suspending (a bulk read of tier 0); `nil` when the
    /// cache is not a
    /// `SynchronousCache`.
    @usableFromInline let valuesAtOnce: (@Sendable ([Key]) -> (values: [Key: Value], missing: [Key]))?
    /// Stores an entry; in a tier that cannot remove by tag (not a `TagRemovingCache`), a tagged entry
    /// removes the key instead, so that no tagged value can outlive its tag there.
    @usableFromInline let setEntry: @Sendable (CacheEntry<Value>, Key) async throws -> Void
    /// Removes a key's entry.
    @usableFromInline let removeEntry: @Sendable (Key) async throws -> Void
    /// Removes every entry.
    @usableFromInline let removeAll: @Sendable () async throws -> Void
    /// Makes every entry carrying a tag a miss (`TagRemovingCache`); does nothing for a tier without that
    /// capability, which holds no tagged entry (see ``setEntry``).
    @usableFromInline let removeAllTagged: @Sendable (String) async throws -> Void
    /// Whether the tier is a `TagVersioningCache`.
    @usableFromInline let isTagVersioning: Bool
    /// Reads the tier's tag versions, or returns `nil` for a tier that is not a `TagVersioningCache`.
    @usableFromInline let tagVersions: @Sendable (Set<String>) async throws -> CacheTagVersions?
    /// Stores an entry stamped with a snapshot of tag versions (`TagVersioningCache`), or as `setEntry`
    /// for a tier that is not one (which removes the key in a tier that cannot remove by tag).
    @usableFromInline let setEntryTaggedAt: @Sendable (CacheEntry<Value>, Key, CacheTagVersions) async throws -> Void
    /// Whether the tier fences loads across processes (`LoadFencingCache`): a load takes its ticket first.
    @usableFromInline let isLoadFencing: Bool
    /// Takes a load ticket for a key and tags (`LoadFencingCache`), or returns `nil` for a tier that is not one.
    @usableFromInline let loadTicket: @Sendable (Key, Set<String>) async throws -> CacheLoadTicket?
    /// Stores a loaded entry through its ticket (`LoadFencingCache`), or as `setEntry` for a tier that is not
    /// one; the tier keeps it only if no removal of the key happened anywhere since the ticket.
    @usableFromInline let setEntryWithTicket: @Sendable (CacheEntry<Value>, Key, CacheLoadTicket) async throws -> Void
    /// Waits for this process's turn to load a key (`LoadLeasingCache`: the tier shares loads across
    /// processes); `nil` for a tier that does not.
    @usableFromInline let loadTurn: (@Sendable (Key) async -> LoadTurn<Value>)?
    /// Whether a process holds the lease on loading a key (`LoadLeasingCache`); `nil` with `loadTurn`.
    @usableFromInline let isLoadLeased: (@Sendable (Key) async -> Bool)?
    /// Reads an entry fresh or stale (`StaleRetainingCache`), or only live ones for a tier that keeps none.
    @usableFromInline let entryIncludingStale: @Sendable (Key) async throws -> CacheEntry<Value>?
    /// Reads many entries at once (`BulkReadingCache`), or key by key for a tier without a bulk read.
    @usableFromInline let entries: @Sendable ([Key]) async throws -> [Key: CacheEntry<Value>]

    /// A handle over a cache that is read with `await`.
    @inlinable
    init<TierCache: Cache<Key, Value>>(_ cache: TierCache) {
        self.init(cache, entryAtOnce: nil, valueAtOnce: nil, valueAndExpiryAtOnce: nil, valuesAtOnce: nil)
    }

    /// A handle over a cache that can also be read without suspending.
    @inlinable
    init<TierCache: SynchronousCache<Key, Value>>(_ cache: TierCache) {
        self.init(
            cache, entryAtOnce: { key in cache.entry(forKey: key) }, valueAtOnce: { key in cache.value(forKey: key) },
            valueAndExpiryAtOnce: { key in cache.valueAndExpiry(forKey: key) },
            valuesAtOnce: { keys in cache.valuesAndMisses(forKeys: keys) })
    }

    @inlinable
    init<TierCache: Cache<Key, Value>>(
        _ cache: TierCache,
        entryAtOnce: (@Sendable (Key) -> CacheEntry<Value>?)?,
        valueAtOnce: (@Sendable (Key) -> Value?)?,
        valueAndExpiryAtOnce: (@Sendable (Key) -> (value: Value, expiresAt: Double, now: Double)?)?,
        valuesAtOnce: (@Sendable ([Key]) -> (values: [Key: Value], missing: [Key]))?
    ) {
        entry = { key in try await cache.entry(forKey: key) }
        self.entryAtOnce = entryAtOnce
        self.valueAtOnce = valueAtOnce
        self.valueAndExpiryAtOnce = valueAndExpiryAtOnce
        self.valuesAtOnce = valuesAtOnce
        // Each capability is probed once, here, for the life of the tier.
        let tagRemoving = cache as? any TagRemovingCache<Key, Value>
        let setEntry: @Sendable (CacheEntry<Value>, Key) async throws -> Void
        if tagRemoving != nil {
            setEntry = { entry, key in try await cache.setEntry(entry, forKey: key) }
        } else {
            setEntry = { entry, key in
                guard entry.tags.isEmpty else { return try await cache.removeEntry(forKey: key) }
                try await cache.setEntry(entry, forKey: key)
            }
        }
        self.setEntry = setEntry
        removeEntry = { key in try await cache.removeEntry(forKey: key) }
        removeAll = { try await cache.removeAll() }
        removeAllTagged = { tag in try await tagRemoving?.removeAll(taggedWith: tag) }
        let versioning = cache as? any TagVersioningCache<Key, Value>
        isTagVersioning = versioning != nil
        tagVersions = { tags in try await versioning?.tagVersions(for: tags) }
        setEntryTaggedAt = { entry, key, versions in
            if let versioning {
                try await versioning.setEntry(entry, forKey: key, taggedAt: versions)
            } else {
                try await setEntry(entry, key)
            }
        }
        let fencing = cache as? any LoadFencingCache<Key, Value>
        isLoadFencing = fencing != nil
        loadTicket = { key, tags in try await fencing?.loadTicket(forKey: key, tags: tags) }
        setEntryWithTicket = { entry, key, ticket in
            if let fencing {
                _ = try await fencing.setEntry(entry, forKey: key, ticket: ticket)
            } else {
                try await setEntry(entry, key)
            }
        }
        if let leasing = cache as? any LoadLeasingCache<Key, Value> {
            loadTurn = { key in await leasing.loadTurn(forKey: key) }
            isLoadLeased = { key in await leasing.isLoadLeased(forKey: key) }
        } else {
            loadTurn = nil
            isLoadLeased = nil
        }
        entryIncludingStale = { key in try await cache.entryIncludingStaleIfRetained(forKey: key) }
        entries = { keys in try await cache.entriesReadOnce(forKeys: keys) }
    }
}

import CacheCore
import Foundation

extension MemoryCache: StaleRetainingCache, BulkReadingCache {
    /// Returns the live value for `key` with its expiry, or `nil` on a miss: ``entry(forKey:)`` without
    /// the cost, whose separate buffer it leaves unread.
    ///
    /// Thread-safe; locks like ``value(forKey:)``.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value and its absolute expiry (`nil` for none), or `nil`.
    /// - Complexity: O(1) on average.
    @inlinable
    public func valueAndExpiry(forKey key: Key) -> (value: Value, expiresAt: Date?)? {
        var expiresAt = Double.infinity
        var cost = 0
        var tagStamp: TagStamp?
        guard let value = lookup(key, wantsCost: false, expiresAt: &expiresAt, cost: &cost, tagStamp: &tagStamp)
        else { return nil }
        return (value, Self.date(fromSeconds: expiresAt))
    }

    /// Returns the live entry for `key`, or an expired one that a load with `LoadOptions` stored with a
    /// later `CacheEntry/staleUntil`, without removing it; `nil` when there is neither.
    ///
    /// A plain read (``entry(forKey:)``, ``value(forKey:)``) never returns such a stale entry: it is a miss
    /// for them, kept (and counted in ``count``) until its `staleUntil`, then dropped like any expired
    /// entry. A fresh entry read here counts as a hit and refreshes its recency; a stale one changes
    /// nothing; `nil` counts as a miss (an absent key, an expired entry not kept for stale reads, or one
    /// whose tag was removed), as it does for ``entry(forKey:)``.
    ///
    /// Thread-safe; takes the key's shard lock once.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry with its expiry, stale-until instant and cost, or `nil`.
    /// - Complexity: O(1) on average.
    public func entryIncludingStale(forKey key: Key) -> CacheEntry<Value>? {
        let now = clock.now.timeIntervalSinceReferenceDate
        guard let found = withTable(for: key, { $0.readIncludingStale(key, now: now) }) else { return nil }
        return CacheEntry(
            value: found.value, expiresAt: Self.date(fromSeconds: found.expiresAt), cost: found.cost,
            staleUntil: found.staleUntil.map { Date(timeIntervalSinceReferenceDate: $0) }, tags: found.tags)
    }

    /// Returns the live entries for those of `keys` the cache holds, one shard lock per key.
    ///
    /// Thread-safe.
    ///
    /// - Parameter keys: The keys to look up; duplicates are read once.
    /// - Returns: The live entries by key.
    /// - Complexity: O(*n*) for *n* keys.
    public func entries(forKeys keys: [Key]) -> [Key: CacheEntry<Value>] {
        var found: [Key: CacheEntry<Value>] = [:]
        found.reserveCapacity(keys.count)
        // A key read once is not read again, hit or miss: a repeated missing key is one miss, not several.
        var read: Set<Key> = []
        for key in keys where read.insert(key).inserted {
            if let entry = entry(forKey: key) { found[key] = entry }
        }
        return found
    }

    /// Returns the live values for those of `keys` the cache holds.
    ///
    /// Thread-safe.
    ///
    /// - Parameter keys: The keys to look up; duplicates are read once.
    /// - Returns: The live values by key.
    /// - Complexity: O(*n*) for *n* keys.
    public func values(forKeys keys: [Key]) -> [Key: Value] {
        var found: [Key: Value] = [:]
        found.reserveCapacity(keys.count)
        var read: Set<Key> = []
        for key in keys where read.insert(key).inserted {
            if let value = value(forKey: key) { found[key] = value }
        }
        return found
    }

    /// Returns the live value for `key` or loads it once, like ``value(forKey:expiry:orLoad:)``, with the
    /// resilience `options` ask for (fail-safe, stale-while-revalidate, refresh-ahead, loader timeouts; see
    /// `LoadOptions` and Docs/Loading.md).
    ///
    /// A loaded value is stored with a `CacheEntry/staleUntil` of its expiry plus the longest grace the
    /// options name, so later calls with options can serve it stale; plain reads never do. Background
    /// refreshes hold this cache weakly and are cancelled when it is deinitialized.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - expiry: The loaded value's expiry; `nil` for ``defaultExpiry``. Refresh-ahead takes its fraction
    ///     of this expiry's relative lifetime.
    ///   - options: The resilience behaviours.
    ///   - load: Produces the value; runs at most once per key at a time, on a task of its own.
    /// - Returns: The cached, stale or loaded value.
    /// - Throws: ``CacheError/Code/invalidArgument`` for options out of range; what `load` threw unless
    ///   fail-safe served a stale value; ``CacheError/Code/loadTimedOut`` at the hard timeout;
    ///   `CancellationError`.
    /// - Complexity: That of ``value(forKey:expiry:orLoad:)``.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func value(
        forKey key: Key,
        expiry: Expiry? = nil,
        options: LoadOptions,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try options.validate()
        return try await loadOnce.value(
            forKey: key, options: options, clock: clock, lifetime: (expiry ?? defaultExpiry).relativeLifetime,
            read: { entryIncludingStale(forKey: key) },
            recheck: { [weak self] in self?.value(forKey: key) },
            load: load
        ) { [weak self] storage, loadID, value in
            self?.storeLoadedValue(value, forKey: key, expiry: expiry, options: options, loadID: loadID, in: storage)
        }
    }

    /// Returns the values for `keys`, loading every key the cache lacks in **one** call of `loadBatch`
    /// (which may return fewer keys than asked), sharing loads with single-key callers both ways, and
    /// storing each loaded value unless a write or removal of its key fenced it.
    ///
    /// - Parameters:
    ///   - keys: The keys to look up; duplicates are read and loaded once.
    ///   - expiry: The loaded values' expiry; `nil` for ``defaultExpiry``.
    ///   - loadBatch: Given every missing key no other caller is loading, returns the values it found;
    ///     called at most once, on a task of its own that runs to its end.
    /// - Returns: The cached and loaded values by key; keys `loadBatch` left out are absent.
    /// - Throws: What `loadBatch` or a joined load threw; `CancellationError`.
    /// - Complexity: O(*n*) reads for *n* keys, one loader call, one store per loaded key.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func values(
        forKeys keys: [Key],
        expiry: Expiry? = nil,
        orLoad loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
    ) async throws -> [Key: Value] {
        try await loadOnce.values(
            forKeys: keys, read: { keys in values(forKeys: keys) },
            recheck: { [weak self] key in self?.value(forKey: key) }, loadBatch: loadBatch
        ) { [weak self] storage, loadID, key, value in
            self?.storeLoadedValue(
                value, forKey: key, expiry: expiry, options: LoadOptions(), loadID: loadID, in: storage)
        }
    }

    /// Stores a loaded value, kept stale as `options` ask, unless a write or removal fenced its load.
    private func storeLoadedValue(
        _ value: Value, forKey key: Key, expiry: Expiry?, options: LoadOptions, loadID: UInt64,
        in coordinator: CoordinatorStorage<Key, Value>
    ) {
        // The cost function and the clock are the caller's code: run before the gate is taken.
        let cost = max(costFunction(value), 0)
        let (expiresAt, now) = instants(of: expiry)
        let staleUntil = options.staleUntil(expiringAt: Self.date(fromSeconds: expiresAt))?
            .timeIntervalSinceReferenceDate
        let released = coordinator.storeLoadedValueAtOnce(ofLoad: loadID) {
            withTable(for: key) {
                $0.store(value, forKey: key, cost: cost, expiresAt: expiresAt, now: now, staleUntil: staleUntil)
            }
        }
        // Replaced and evicted values are released here, after the gate and the shard's lock are dropped.
        withExtendedLifetime(released) {}
    }
}

import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MemoryCache: StaleRetainingCache {
    /// Returns the live value for `key` with its expiry and the clock reading it was found live at, or
    /// `nil` on a miss: ``entry(forKey:)`` without the cost, whose separate buffer it leaves unread, and
    /// without building a `Date`.
    ///
    /// Thread-safe; locks like ``value(forKey:)``.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value, its expiry in seconds since the reference date (`.infinity` for none) and the
    ///   reading of ``clock`` it was live at (`-.infinity` when no reading was needed), or `nil`.
    /// - Complexity: O(1) on average.
    @inlinable
    public func valueAndExpiry(forKey key: Key) -> (value: Value, expiresAt: TimeInterval, now: TimeInterval)? {
        var expiresAt = Double.infinity
        var cost = 0
        var tagStamp: TagStamp?
        var staleUntil: Double?
        var now = -Double.infinity
        guard
            let value = lookup(
                key, wantsCost: false, expiresAt: &expiresAt, cost: &cost, tagStamp: &tagStamp, staleUntil: &staleUntil,
                now: &now)
        else { return nil }
        return (value, expiresAt, now)
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
    @inlinable
    public func value(
        forKey key: Key,
        expiry: Expiry? = nil,
        options: LoadOptions,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        // The fast path, as for a MultiCache: a fresh hit with no refresh-ahead due is one read, with no
        // lock but the shard's and no allocation.
        if options.isValid, let found = valueAndExpiry(forKey: key),
            !options.isRefreshAheadDue(expiresAt: found.expiresAt, now: found.now, expiry: expiry ?? defaultExpiry)
        {
            return found.value
        }
        return try await loadWithOptions(forKey: key, expiry: expiry, options: options, orLoad: load)
    }

    /// Everything but a fresh hit: the coordinator's resilient load, which reads the key again, fresh or
    /// stale.
    ///
    /// Inlinable but never inlined: specialized for the caller's types, it takes `load` as the caller
    /// formed it, so that the fast path above converts nothing. Called unspecialized, it made the caller
    /// wrap `load` in a reabstraction thunk, which the compiler set up before the tier was even read.
    @inlinable @inline(never)
    func loadWithOptions(
        forKey key: Key, expiry: Expiry?, options: LoadOptions,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await resilientLoad(forKey: key, expiry: expiry, options: options, orLoad: load)
    }

    /// The body of ``loadWithOptions(forKey:expiry:options:orLoad:)``.
    @usableFromInline
    func resilientLoad(
        forKey key: Key, expiry: Expiry?, options: LoadOptions,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await loadOnce.value(
            forKey: key, options: options, clock: clock, expiry: expiry ?? defaultExpiry,
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

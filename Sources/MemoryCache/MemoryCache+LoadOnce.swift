import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MemoryCache {
    /// Returns the live value for `key` or, on a miss, loads it once however many callers ask at the same
    /// time, stores it, and returns it to all of them.
    ///
    /// ```swift
    /// let avatar = try await avatars.value(forKey: userID, expiry: .seconds(600)) {
    ///     try await api.fetchAvatar(userID)
    /// }
    /// ```
    ///
    /// The same load-once as `MultiCache`'s, over this one cache, so one `MemoryCache` need not be wrapped in
    /// a `MultiCache` to get it. The first caller to miss starts the load on a task of its own; callers that
    /// miss while it runs join it instead of loading again. The value is stored before any caller returns,
    /// so a read right after this returns is a hit (unless the value is too large to keep: then the callers
    /// get it and nothing is stored). The load is counted in ``statistics`` (`loads`, `loadsShared`).
    ///
    /// - A thrown error reaches every waiter and is not cached: the next call loads again.
    /// - A cancelled caller gets `CancellationError` at once; the load goes on for the others. When every
    ///   caller has cancelled, the load's task is cancelled and its result is not stored; the next call
    ///   starts a new load.
    /// - A write or removal of `key` (``setValue(_:forKey:expiry:)``, ``setEntry(_:forKey:)``, the
    ///   subscript, ``removeValue(forKey:)``, ``removeEntry(forKey:)``) or ``removeAll()`` while the load runs
    ///   keeps its result out of the cache; the callers already waiting still get the loaded value. Trims,
    ///   evictions, expirations and memory pressure do not fence a load.
    /// - So does one that lands after this call began but before its load did: the cache is read once more
    ///   before the loader runs, and a value found then (the one just written) is returned without loading;
    ///   otherwise the loaded value is returned but not stored.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - expiry: The loaded value's expiry, resolved against ``clock`` when the load finishes; `nil` (the
    ///     default) for ``defaultExpiry``. With the default, a trailing closure is the loader:
    ///     `cache.value(forKey: key) { try await fetch() }`.
    ///   - load: Produces the value on a miss; runs at most once per key at a time, on a task of its own,
    ///     never under a lock. It should honour cancellation.
    /// - Returns: The cached or loaded value.
    /// - Throws: What `load` threw; `CancellationError` when the caller's task was cancelled.
    /// - Complexity: O(1) on average for the read and the store, plus one run of `load` shared by every
    ///   concurrent caller of the key. The first call creates the cache's load-once coordinator; from then
    ///   on each write and removal takes its lock once to fence loads in flight.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func value(
        forKey key: Key,
        expiry: Expiry? = nil,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await loadOnce.value(forKey: key, read: { self.value(forKey: key) }, load: load) { storage, loadID, value in
            self.storeLoadedValue(value, forKey: key, expiry: expiry, loadID: loadID, in: storage)
        }
    }

    /// Stores a loaded value unless a write or removal fenced its load; a value too large to keep is not
    /// stored (its callers still get it).
    private func storeLoadedValue(
        _ value: Value, forKey key: Key, expiry: Expiry?, loadID: UInt64, in coordinator: CoordinatorStorage<Key, Value>
    ) {
        // The cost function and the clock are the caller's code: run before the gate is taken.
        let cost = max(costFunction(value), 0)
        let (expiresAt, now) = instants(of: expiry)
        let released = coordinator.storeLoadedValueAtOnce(ofLoad: loadID) {
            withTable(for: key) { $0.store(value, forKey: key, cost: cost, expiresAt: expiresAt, now: now) }
        }
        // Replaced and evicted values are released here, after the gate and the shard's lock are dropped.
        withExtendedLifetime(released) {}
    }

    /// Runs `body`, a write or removal of `key` (every key when `nil`), fenced against loads in flight once
    /// the cache has loaded; before its first load, just runs it. Not inlinable: the inlined writes call it
    /// without knowing the coordinator's layout.
    @usableFromInline
    func fenced(_ key: Key?, _ body: () throws -> Void) rethrows {
        try loadOnce.fenced(key, body)
    }
}

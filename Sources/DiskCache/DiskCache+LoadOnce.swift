import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DiskCache {
    /// Returns the live value for `key` or, on a miss, loads it once however many callers in this process
    /// ask at the same time, stores it, and returns it to all of them.
    ///
    /// ```swift
    /// let report = try await reports.value(forKey: "2026-11", expiry: .hours(6)) {
    ///     try await api.fetchReport(month: "2026-11")
    /// }
    /// ```
    ///
    /// The same load-once as `MultiCache`'s, over this one cache, so one `DiskCache` need not be wrapped in
    /// a `MultiCache` to get it. The first caller to miss starts the load on a task of its own; callers that
    /// miss while it runs join it instead of loading again. The value is stored before any caller returns,
    /// so a read right after this returns is a hit. A store that fails (a full disk, a value too large for
    /// ``DiskCacheConfiguration/byteLimit``, a value the codec cannot encode) is reported to the observer as
    /// ``CacheEvent/Kind/writeBackFailed``; the callers still get the value. The load is counted in
    /// ``statistics`` (`loads`, `loadsShared`) of this instance, and not saved in the store's statistics file.
    ///
    /// - A thrown error reaches every waiter and is not cached: the next call loads again.
    /// - A cancelled caller gets `CancellationError` at once; the load goes on for the others. When every
    ///   caller has cancelled, the load's task is cancelled and its result is not stored; the next call
    ///   starts a new load.
    /// - A write or removal of `key` (`setEntry(_:forKey:)`, `setValue(_:forKey:expiry:)`,
    ///   `removeEntry(forKey:)`, sync or async) or `removeAll()` through this instance while the load
    ///   runs keeps its result out of the store; the callers already waiting still get the loaded value.
    ///   Trims do not fence a load, nor do other instances or processes sharing the folder.
    /// - So does one that lands after this call began but before its load did: the store is read once more
    ///   before the loader runs, and a value found then (the one just written) is returned without loading;
    ///   otherwise the loaded value is returned but not stored.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - expiry: The loaded value's expiry, resolved against ``clock`` when the load finishes; `nil` (the
    ///     default) for ``DiskCacheConfiguration/defaultExpiry``. With the default, a trailing closure is the
    ///     loader: `cache.value(forKey: key) { try await fetch() }`.
    ///   - load: Produces the value on a miss; runs at most once per key at a time, on a task of its own,
    ///     never under a lock. It should honour cancellation.
    /// - Returns: The cached or loaded value.
    /// - Throws: What `load` threw; what the async `entry(forKey:)` throws for the first read;
    ///   `CancellationError` when the caller's task was cancelled.
    /// - Complexity: The file I/O of the async `entry(forKey:)` and, after a load, of
    ///   `setEntry(_:forKey:)`, both on the I/O queue, plus one run of `load` shared by every concurrent
    ///   caller of the key. The store of a loaded value holds the coordinator's store gate for its write, so
    ///   a write or removal through this instance that starts meanwhile waits for that write.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func value(
        forKey key: Key,
        expiry: Expiry? = nil,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await loadOnce.value(forKey: key, read: { try await self.value(forKey: key) }, load: load) {
            storage, loadID, value in
            await self.storeLoadedValue(value, forKey: key, expiry: expiry, loadID: loadID, in: storage)
        }
    }

    /// Stores a loaded value on the I/O queue unless a write or removal fenced its load; reports a failure.
    private func storeLoadedValue(
        _ value: Value, forKey key: Key, expiry: Expiry?, loadID: UInt64, in coordinator: CoordinatorStorage<Key, Value>
    ) async {
        do {
            try await onIOQueue {
                // The codec and the clock are the caller's code: run before the gate is taken.
                let keyBytes = try self.canonicalBytes(of: key)
                let valueBytes = try self.encode(value)
                let expiresAt = (expiry ?? self.configuration.defaultExpiry).expirationDate(from: self.clock.now)
                // Events the write reports reach the observer after the gate is released, so an observer
                // that writes to this cache cannot wait on the gate its own call holds.
                let written = self.engine.deferringEvents {
                    coordinator.storeLoadedValueAtOnce(ofLoad: loadID) {
                        Result {
                            try self.engine.write(
                                keyBytes: keyBytes, valueBytes: valueBytes, expiresAt: expiresAt, cost: nil,
                                staleUntil: nil, hasTags: false)
                        }
                    }
                }
                try written?.get()
            }
        } catch {
            engine.report(.writeBackFailed, "cannot store a loaded value", path: nil, error: error)
        }
    }
}

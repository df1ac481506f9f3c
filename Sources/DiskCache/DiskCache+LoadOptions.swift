import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DiskCache: StaleRetainingCache {
    /// Returns the live entry for `key`, or an expired one that was stored with a later
    /// `CacheEntry/staleUntil` (a load with `LoadOptions`, or a `MultiCache` write-back of one), without
    /// removing it; `nil` when there is neither.
    ///
    /// Plain reads (`entry(forKey:)`, `value(forKey:)`) never return such a stale entry: it is a miss for
    /// them, left in place until its `staleUntil`, then removed like any expired entry (by a read,
    /// `removeExpired()` or a sweep). The record stores the stale retention in its header
    /// (Docs/DiskFormat.md).
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry with its expiry, stale-until instant and cost, or `nil`.
    /// - Throws: What `entry(forKey:)` throws.
    /// - Complexity: That of `entry(forKey:)`: file I/O on the caller's thread.
    ///
    /// Thread-safe.
    public func entryIncludingStale(forKey key: Key) throws -> CacheEntry<Value>? {
        guard let record = try engine.read(keyBytes: try canonicalBytes(of: key), includingStale: true) else {
            return nil
        }
        return CacheEntry(
            value: try decode(record.valueBytes), expiresAt: record.header.expiresAt, cost: record.header.cost,
            staleUntil: record.header.staleUntil, tags: record.tags)
    }

    /// Returns the entry for `key` fresh or stale, like the synchronous `entryIncludingStale(forKey:)`,
    /// without blocking the cooperative thread pool.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry, or `nil`.
    /// - Throws: What the synchronous form throws; `CancellationError` when cancelled before the read.
    /// - Complexity: That of the synchronous form, run on the I/O queue.
    ///
    /// Thread-safe.
    public func entryIncludingStale(forKey key: Key) async throws -> CacheEntry<Value>? {
        try await onIOQueue { try self.entryIncludingStale(forKey: key) as CacheEntry<Value>? }
    }

    /// Returns the live value for `key` or loads it once, like `value(forKey:expiry:orLoad:)`, with the
    /// resilience `options` ask for (fail-safe, stale-while-revalidate, refresh-ahead, loader timeouts; see
    /// `LoadOptions` and Docs/Loading.md).
    ///
    /// A loaded value is stored with a `CacheEntry/staleUntil` of its expiry plus the longest grace the
    /// options name (the record holds at most about 45 days of it). Background refreshes hold this cache
    /// weakly and are cancelled when it is deinitialized.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - expiry: The loaded value's expiry; `nil` for ``DiskCacheConfiguration/defaultExpiry``.
    ///   - options: The resilience behaviours.
    ///   - load: Produces the value; runs at most once per key at a time, on a task of its own.
    /// - Returns: The cached, stale or loaded value.
    /// - Throws: ``CacheError/Code/invalidArgument`` for options out of range; what `load` threw unless
    ///   fail-safe served a stale value; ``CacheError/Code/loadTimedOut`` at the hard timeout; what the
    ///   first read throws; `CancellationError`.
    /// - Complexity: That of `value(forKey:expiry:orLoad:)`.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func value(
        forKey key: Key,
        expiry: Expiry? = nil,
        options: LoadOptions,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        // No fast path of its own: the coordinator reads the file once and returns a fresh hit at once, with
        // no lock taken, and the file read is what such a call costs.
        try await loadOnce.value(
            forKey: key, options: options, clock: clock, expiry: expiry ?? configuration.defaultExpiry,
            read: { try await self.entryIncludingStale(forKey: key) },
            recheck: { [weak self] in try await self?.value(forKey: key) },
            load: load
        ) { [weak self] storage, loadID, value in
            await self?.storeLoadedValue(
                value, forKey: key, expiry: expiry, options: options, loadID: loadID, in: storage)
        }
    }

    /// Returns the values for `keys`, loading every key the store lacks in **one** call of `loadBatch`
    /// (which may return fewer keys than asked), sharing loads with single-key callers of this instance
    /// both ways, and storing each loaded value unless a write or removal of its key fenced it.
    ///
    /// - Parameters:
    ///   - keys: The keys to look up; duplicates are read and loaded once.
    ///   - expiry: The loaded values' expiry; `nil` for ``DiskCacheConfiguration/defaultExpiry``.
    ///   - loadBatch: Given every missing key no other caller is loading, returns the values it found;
    ///     called at most once, on a task of its own that runs to its end.
    /// - Returns: The cached and loaded values by key; keys `loadBatch` left out are absent.
    /// - Throws: What a read, `loadBatch` or a joined load threw; `CancellationError`.
    /// - Complexity: One file read per key, one loader call, one file write per loaded key.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func values(
        forKeys keys: [Key],
        expiry: Expiry? = nil,
        orLoad loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
    ) async throws -> [Key: Value] {
        try await loadOnce.values(
            forKeys: keys,
            read: { keys in
                var found: [Key: Value] = [:]
                for key in keys { if let value = try await self.value(forKey: key) { found[key] = value } }
                return found
            },
            recheck: { [weak self] key in try await self?.value(forKey: key) },
            loadBatch: loadBatch
        ) { [weak self] storage, loadID, key, value in
            await self?.storeLoadedValue(
                value, forKey: key, expiry: expiry, options: LoadOptions(), loadID: loadID, in: storage)
        }
    }

    /// Stores a loaded value on the I/O queue, kept stale as `options` ask, unless a write or removal
    /// fenced its load; reports a failure.
    private func storeLoadedValue(
        _ value: Value, forKey key: Key, expiry: Expiry?, options: LoadOptions, loadID: UInt64,
        in coordinator: CoordinatorStorage<Key, Value>
    ) async {
        do {
            try await onIOQueue {
                // The codec and the clock are the caller's code: run before the gate is taken.
                let keyBytes = try self.canonicalBytes(of: key)
                let valueBytes = try self.encode(value)
                let expiresAt = (expiry ?? self.configuration.defaultExpiry).expirationDate(from: self.clock.now)
                let staleUntil = options.staleUntil(expiringAt: expiresAt)
                // Events the write reports reach the observer after the gate is released (as for plain loads).
                let written = self.engine.deferringEvents {
                    coordinator.storeLoadedValueAtOnce(ofLoad: loadID) {
                        Result {
                            try self.engine.write(
                                keyBytes: keyBytes, valueBytes: valueBytes, expiresAt: expiresAt, cost: nil,
                                staleUntil: staleUntil, hasTags: false)
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

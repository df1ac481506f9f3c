#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The fast path of a tier read without awaiting (a `MemoryCache`): the load calls of
// `LoadHostingCache+Loading.swift`, specialized for such a tier, read it first on the caller's thread and
// hand a miss to the same one implementation. A more constrained extension, so the compiler picks these for a
// synchronous tier and the general ones everywhere else (a generic caller over `some LoadHostingCache` gets
// the general ones, which are the same calls without the fast read).
extension LoadHostingCache where Self: SynchronousCache {
    /// Returns the live value for `key` or loads it once: `value(forKey:expiry:tags:options:orLoad:)`,
    /// with a fresh hit answered by one synchronous read of the cache, without a suspension or an allocation.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - expiry: The loaded value's expiry; `nil` for the tier's default expiry.
    ///   - tags: The tags of the loaded entry.
    ///   - options: The resilience behaviours; every one off by default.
    ///   - load: Produces the value on a miss; runs at most once per key at a time, on a task of its own.
    /// - Returns: The cached, stale (when `options` allow) or loaded value.
    /// - Throws: What the general form throws.
    /// - Complexity: O(1) for a fresh hit; otherwise that of the general form.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    @inlinable
    public func value(
        forKey key: Key,
        expiry: Expiry? = nil,
        tags: Set<String> = [],
        options: LoadOptions = LoadOptions(),
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        guard options.hasNoBehaviour else {
            // A fresh hit with no refresh-ahead due is one read.
            if options.isValid, let found = valueAndExpiry(forKey: key),
                !options.mayBeRefreshAheadDue(expiresAt: found.expiresAt, now: found.now, expiry: expiry)
            {
                return found.value
            }
            return try await loadAfterFastRead(forKey: key, expiry: expiry, tags: tags, options: options, orLoad: load)
        }
        // The change sequence is read before the cache, so a write that lands between the read and the load
        // fences the load (see `CoordinatorStorage.value(forKey:read:recheck:load:store:)`).
        let host = loadHost
        let sequenceSeen = host.changeSequence
        if let found = valueAndExpiry(forKey: key) { return found.value }
        return try await loadAfterFastMiss(
            of: key, sequenceSeen: sequenceSeen, host: host, expiry: expiry, tags: tags, orLoad: load)
    }

    /// Returns the values for `keys`, loading those the cache lacks in one batch:
    /// `values(forKeys:expiry:tags:options:orLoad:)`, with the cache read in one synchronous
    /// bulk read (one clock reading, one lock per shard) before anything else.
    ///
    /// - Parameters:
    ///   - keys: The keys to look up; duplicates are read and loaded once.
    ///   - expiry: The loaded values' expiry; `nil` for the tier's default expiry.
    ///   - tags: The tags of every loaded entry.
    ///   - options: The resilience behaviours; every one off by default.
    ///   - loadBatch: Given every missing key no other caller is loading, returns the values it found.
    /// - Returns: The cached, stale (when `options` allow) and loaded values by key.
    /// - Throws: What the general form throws.
    /// - Complexity: O(*n*) for *n* keys when every one is a hit; otherwise that of the general form.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    @inlinable
    public func values(
        forKeys keys: [Key],
        expiry: Expiry? = nil,
        tags: Set<String> = [],
        options: LoadOptions = LoadOptions(),
        orLoad loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
    ) async throws -> [Key: Value] {
        guard options.hasNoBehaviour else {
            return try await loadAfterFastRead(
                forKeys: keys, expiry: expiry, tags: tags, options: options, orLoad: loadBatch)
        }
        let host = loadHost
        let sequenceSeen = host.changeSequence
        var seen = Set<Key>()
        seen.reserveCapacity(keys.count)
        let unique = keys.filter { seen.insert($0).inserted }
        let (found, missing) = valuesAndMisses(forKeys: unique)
        guard !missing.isEmpty else { return found }
        return try await loadAfterFastMiss(
            of: missing, found: found, sequenceSeen: sequenceSeen, host: host, expiry: expiry, tags: tags,
            orLoad: loadBatch)
    }

    // Inlinable but never inlined: specialized for the caller's types, each takes the loader as the caller
    // formed it, so that the fast path above converts nothing; called unspecialized, the caller would wrap the
    // loader in a reabstraction thunk before the cache was even read.

    /// Everything but a fresh hit, with options.
    @inlinable @inline(never)
    func loadAfterFastRead(
        forKey key: Key, expiry: Expiry?, tags: Set<String>, options: LoadOptions,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await hostedValue(forKey: key, expiry: expiry, tags: tags, options: options, orLoad: load)
    }

    /// A plain load after the fast read missed; its read again before the loader is a synchronous one.
    @inlinable @inline(never)
    func loadAfterFastMiss(
        of key: Key, sequenceSeen: UInt64, host: LoadHost<Key, Value>, expiry: Expiry?, tags: Set<String>,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await host.value(
            afterMissOf: key, sequenceSeen: sequenceSeen, clock: clock, expiry: expiry, tags: tags,
            recheck: { self.valueAndExpiry(forKey: key)?.value }, load: load)
    }

    /// A bulk load with options.
    @inlinable @inline(never)
    func loadAfterFastRead(
        forKeys keys: [Key], expiry: Expiry?, tags: Set<String>, options: LoadOptions,
        orLoad loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
    ) async throws -> [Key: Value] {
        try await hostedValues(forKeys: keys, expiry: expiry, tags: tags, options: options, orLoad: loadBatch)
    }

    /// A plain bulk load of the keys the fast read missed; a key's read again before the loader is a
    /// synchronous one.
    @inlinable @inline(never)
    func loadAfterFastMiss(
        of missing: [Key], found: [Key: Value], sequenceSeen: UInt64, host: LoadHost<Key, Value>, expiry: Expiry?,
        tags: Set<String>, orLoad loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
    ) async throws -> [Key: Value] {
        try await host.values(
            loading: missing, found: found, sequenceSeen: sequenceSeen, clock: clock, expiry: expiry, tags: tags,
            recheck: { key in self.valueAndExpiry(forKey: key)?.value }, loadBatch: loadBatch)
    }
}

import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MultiCache: StaleRetainingCache {
    /// Returns the cached value for `key` or loads it once, like ``value(forKey:expiry:orLoad:)``, with the
    /// resilience `options` ask for: fail-safe, stale-while-revalidate, refresh-ahead and loader timeouts
    /// (see `LoadOptions` and Docs/Loading.md).
    ///
    /// ```swift
    /// let options = LoadOptions(failSafe: .init(maximumStaleness: .seconds(3_600)), softTimeout: .milliseconds(300))
    /// let profile = try await cache.value(forKey: userID, expiry: .seconds(600), options: options) {
    ///     try await api.profile(userID)
    /// }
    /// ```
    ///
    /// - A fresh hit is returned as by the plain call; with refresh-ahead, a hit past the fraction of its
    ///   lifetime also starts one background refresh.
    /// - An expired entry still kept (its `CacheEntry/staleUntil` is later) is returned at once within the
    ///   stale-while-revalidate grace, while one background refresh per key runs; under fail-safe it is
    ///   returned instead of the loader's error, and without loading while an earlier failure throttles
    ///   the key.
    /// - The loaded value is stored in every tier with a `staleUntil` of its expiry plus the longest grace
    ///   the options name (each tier's copy capped by its ``Tier/maximumLifetime``).
    /// - Background refreshes are fenced by writes and removals like any load, hold this cache weakly, and
    ///   are cancelled when it is deinitialized.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - expiry: The loaded value's expiry; its relative lifetime is what refresh-ahead takes a fraction of.
    ///   - options: The resilience behaviours; all off in `LoadOptions()`.
    ///   - load: Produces the value; runs at most once per key at a time, on a task of its own.
    /// - Returns: The cached, stale or loaded value.
    /// - Throws: ``CacheError/Code/invalidArgument`` for options out of range; what `load` threw unless
    ///   fail-safe served a stale value; ``CacheError/Code/loadTimedOut`` at the hard timeout;
    ///   ``CacheError/Code/tierFailure`` when every tier failed to read; `CancellationError`.
    /// - Complexity: That of ``value(forKey:expiry:orLoad:)``; a stale or missing key reads the tiers a
    ///   second time for stale entries.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    @inlinable
    public func value(
        forKey key: Key,
        expiry: Expiry = .never,
        options: LoadOptions,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        // The commonest read, a fresh hit in a synchronous first tier with no refresh-ahead due, takes the
        // plain read's path, inlined like `value(forKey:)` so that it is compiled for the caller's types: one
        // read of tier 0, which hands back the clock reading it judged the entry live at, so that no clock
        // is read, no `Date` built and no lock taken beyond the plain hit's.
        if options.isValid, let valueAndExpiryAtOnce = tiers[0].handle.valueAndExpiryAtOnce,
            let found = valueAndExpiryAtOnce(key),
            !options.isRefreshAheadDue(expiresAt: found.expiresAt, now: found.now, expiry: expiry)
        {
            countTierZeroHit()
            return found.value
        }
        return try await loadWithOptions(forKey: key, expiry: expiry, options: options, orLoad: load)
    }

    /// Everything but a fresh tier-0 hit: the coordinator's resilient load, which checks the options and
    /// reads the tiers again, fresh or stale.
    ///
    /// Inlinable but never inlined: specialized for the caller's types, it takes `load` as the caller
    /// formed it, so that the fast path above converts nothing. Called unspecialized, it made the caller
    /// wrap `load` in a reabstraction thunk, which the compiler set up before the tier was even read.
    @inlinable @inline(never)
    func loadWithOptions(
        forKey key: Key, expiry: Expiry, options: LoadOptions, orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await resilientLoad(forKey: key, expiry: expiry, options: options, orLoad: load)
    }

    /// The body of ``loadWithOptions(forKey:expiry:options:orLoad:)``.
    @usableFromInline
    func resilientLoad(
        forKey key: Key, expiry: Expiry, options: LoadOptions, orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await loadValue(forKey: key, expiry: expiry, tags: [], options: options, orLoad: load)
    }

    /// Returns the entry for `key` whether fresh or stale: the live entry as ``entry(forKey:)`` finds it
    /// (with its write-backs), else the first expired entry a tier still keeps before its
    /// `CacheEntry/staleUntil`.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry, or `nil` when no tier holds it fresh or stale.
    /// - Throws: What ``entry(forKey:)`` throws.
    /// - Complexity: One ``entry(forKey:)``; when it misses, one more read per tier.
    ///
    /// Thread-safe.
    public func entryIncludingStale(forKey key: Key) async throws -> CacheEntry<Value>? {
        if let found = try await entry(forKey: key) { return found }
        // A tier that failed the read above was counted and reported there; here it is just passed over.
        for tier in tiers {
            if let found = try? await tier.handle.entryIncludingStale(key) { return found }
        }
        return nil
    }
}

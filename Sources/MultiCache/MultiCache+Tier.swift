import CacheCore
import Foundation

extension MultiCache {
    /// One tier of a ``MultiCache``: a cache, a name for errors and statistics, and an optional cap on how
    /// long the tier keeps what the `MultiCache` writes into it.
    ///
    /// ```swift
    /// let memoryTier = MultiCache<String, Data>.Tier(memory, name: "memory", maximumLifetime: .seconds(60))
    /// ```
    ///
    /// A plain, immutable value; `Sendable` and thread-safe (the cache it holds is `Sendable` too).
    public struct Tier: Sendable {
        /// The tier's cache.
        public let cache: any Cache<Key, Value>
        /// The name used in ``CacheError/TierFailure``, ``CacheEvent`` messages and statistics.
        public let name: String
        /// The longest any entry written into this tier by the `MultiCache` lives there, or `nil` for no
        /// cap. A copy expires at the earlier of the entry's own expiry and the write time plus this
        /// duration (measured on the `MultiCache`'s clock); it must be positive.
        public let maximumLifetime: Duration?

        /// How the `MultiCache` reads and writes ``cache``: closures compiled for its concrete type where
        /// the initializer saw it.
        @usableFromInline let handle: TierHandle<Key, Value>

        /// Creates a tier.
        ///
        /// Pass the cache with its concrete type where you can: the tier's calls are then compiled for that
        /// type. An `any Cache<Key, Value>` is accepted too; calls then go through the existential.
        ///
        /// - Parameters:
        ///   - cache: The tier's cache.
        ///   - name: A readable name; `nil` uses the cache's type name (for example `MemoryCache<String, Data>`).
        ///   - maximumLifetime: A cap on the lifetime of copies written into this tier (a fast tier holding
        ///     only recent data, for example), or `nil` for none. Must be positive; checked by
        ///     ``MultiCache/init(tiers:clock:observer:authority:)``.
        @inlinable
        public init<TierCache: Cache<Key, Value>>(
            _ cache: TierCache,
            name: String? = nil,
            maximumLifetime: Duration? = nil
        ) {
            self.init(cache, name: name, maximumLifetime: maximumLifetime, handle: TierHandle(cache))
        }

        /// Creates a tier over a cache that reads without suspending (an in-memory tier); as first tier
        /// of a ``MultiCache``, it is read without `await`.
        ///
        /// - Parameters:
        ///   - cache: The tier's cache.
        ///   - name: A readable name; `nil` uses the cache's type name (for example `MemoryCache<String, Data>`).
        ///   - maximumLifetime: A cap on the lifetime of copies written into this tier, or `nil` for none.
        ///     Must be positive; checked by ``MultiCache/init(tiers:clock:observer:authority:)``.
        @inlinable
        public init<TierCache: SynchronousCache<Key, Value>>(
            _ cache: TierCache,
            name: String? = nil,
            maximumLifetime: Duration? = nil
        ) {
            self.init(cache, name: name, maximumLifetime: maximumLifetime, handle: TierHandle(cache))
        }

        // The public initializers differ only in the handle that overload resolution picks for the
        // cache's static type (with a synchronous read or without).
        @usableFromInline
        init(
            _ cache: any Cache<Key, Value>,
            name: String?,
            maximumLifetime: Duration?,
            handle: TierHandle<Key, Value>
        ) {
            self.cache = cache
            self.name = name ?? String(describing: type(of: cache))
            self.maximumLifetime = maximumLifetime
            self.handle = handle
        }

        /// `entry` as this tier should hold it when written at `now`: its expiry capped by
        /// ``maximumLifetime``, its value and cost unchanged.
        func capping(_ entry: CacheEntry<Value>, now: Date) -> CacheEntry<Value> {
            guard let maximumLifetime else { return entry }
            var copy = entry
            let cap = now.addingTimeInterval(maximumLifetime.timeInterval)
            copy.expiresAt = Expiry.earliest(entry.expiresAt, cap)
            // The cap bounds how long the tier keeps the copy at all, stale or not.
            copy.staleUntil = entry.staleUntil.map { min($0, cap) }
            return copy
        }
    }
}

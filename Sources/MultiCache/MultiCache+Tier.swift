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

        /// Reads an entry from ``cache``, through a closure formed where the tier was created.
        ///
        /// When the tier is created from a concrete cache type, the compiler specializes
        /// ``init(_:name:maximumLifetime:)`` (it is inlinable) and this closure for that type, so a read
        /// runs the tier's specialized code rather than the unspecialized witness that a call through
        /// `any Cache` reaches, which looks up generic metadata at run time on every call. A MultiCache's
        /// hit path is one such call, so this is most of what a tier-0 hit costs.
        @usableFromInline let read: @Sendable (Key) async throws -> CacheEntry<Value>?

        /// Reads an entry from ``cache`` without suspending, when the cache is a `SynchronousCache`;
        /// `nil` otherwise. A `MultiCache` reads its first tier through this when it can: an `async` call
        /// costs a task allocation and an executor check even when it never suspends, which is more than
        /// an in-memory hit itself.
        @usableFromInline let readAtOnce: (@Sendable (Key) -> CacheEntry<Value>?)?

        /// Creates a tier.
        ///
        /// Takes the cache as a generic argument so that, where its concrete type is known, the tier's reads
        /// are compiled for that type; an `any Cache<Key, Value>` is accepted too, and reads then go
        /// through the existential.
        ///
        /// - Parameters:
        ///   - cache: The tier's cache.
        ///   - name: A readable name; `nil` uses the cache's type name (for example `MemoryCache<String, Data>`).
        ///   - maximumLifetime: A cap on the lifetime of copies written into this tier (a fast tier holding
        ///     only recent data, for example), or `nil` for none. Must be positive; checked by
        ///     ``MultiCache/init(tiers:clock:observer:)``.
        @inlinable
        public init<TierCache: Cache<Key, Value>>(
            _ cache: TierCache,
            name: String? = nil,
            maximumLifetime: Duration? = nil
        ) {
            self.cache = cache
            self.name = name ?? String(describing: type(of: cache))
            self.maximumLifetime = maximumLifetime
            read = { key in try await cache.entry(forKey: key) }
            readAtOnce = nil
        }

        /// Creates a tier over a cache that reads without suspending (an in-memory tier); as first tier
        /// of a ``MultiCache``, its hits then cost no `async` call.
        ///
        /// - Parameters:
        ///   - cache: The tier's cache.
        ///   - name: A readable name; `nil` uses the cache's type name (for example `MemoryCache<String, Data>`).
        ///   - maximumLifetime: A cap on the lifetime of copies written into this tier, or `nil` for none.
        ///     Must be positive; checked by ``MultiCache/init(tiers:clock:observer:)``.
        @inlinable
        public init<TierCache: SynchronousCache<Key, Value>>(
            _ cache: TierCache,
            name: String? = nil,
            maximumLifetime: Duration? = nil
        ) {
            self.cache = cache
            self.name = name ?? String(describing: type(of: cache))
            self.maximumLifetime = maximumLifetime
            read = { key in try await cache.entry(forKey: key) }
            readAtOnce = { key in cache.entry(forKey: key) }
        }

        /// `entry` as this tier should hold it when written at `now`: its expiry capped by
        /// ``maximumLifetime``, its value and cost unchanged.
        func capping(_ entry: CacheEntry<Value>, now: Date) -> CacheEntry<Value> {
            guard let maximumLifetime else { return entry }
            var copy = entry
            copy.expiresAt = Expiry.earliest(entry.expiresAt, now.addingTimeInterval(maximumLifetime.timeInterval))
            return copy
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A cache that keeps an entry past its expiry until the entry's `CacheEntry/staleUntil`, for loads that
/// may serve it stale, and lets the load path read it.
///
/// Every Strata tier conforms (`MemoryCache`, `DiskCache`, `RedisCache`, `MultiCache` and the CacheTesting
/// doubles). A plain read (``Cache/entry(forKey:)``) of a conformer still never returns an entry at or past
/// its `expiresAt`: only ``entryIncludingStale(forKey:)`` does, and only the load-once calls with
/// `LoadOptions` use it. A tier that does not conform keeps each entry until `expiresAt` only, and a
/// load then finds no stale value in it.
public protocol StaleRetainingCache<Key, Value>: Cache {
    /// Returns the entry for `key` whether fresh or stale: a live entry as ``Cache/entry(forKey:)`` returns
    /// it, or an expired one still before its `staleUntil`; `nil` when there is neither.
    ///
    /// Does not count a hit or a miss beyond what the conformer documents, and never removes a stale entry.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry with its `expiresAt` and `staleUntil`, or `nil`.
    /// - Throws: What ``Cache/entry(forKey:)`` throws.
    /// - Complexity: That of ``Cache/entry(forKey:)``.
    ///
    /// Thread-safe.
    func entryIncludingStale(forKey key: Key) async throws -> CacheEntry<Value>?
}

/// A cache that reads many keys in one request (a remote tier's `MGET`), faster than one read per key.
///
/// ``Cache/values(forKeys:)`` and the bulk reads of a `MultiCache` use it when a tier conforms, and read
/// key by key otherwise.
public protocol BulkReadingCache<Key, Value>: Cache {
    /// Returns the live entries for those of `keys` that have one; absent and expired keys are left out.
    ///
    /// - Parameter keys: The keys to look up; duplicates are read once.
    /// - Returns: The live entries by key.
    /// - Throws: What ``Cache/entry(forKey:)`` throws; a failure fails the whole read.
    /// - Complexity: Set by the conformer; ideally one round trip.
    ///
    /// Thread-safe.
    func entries(forKeys keys: [Key]) async throws -> [Key: CacheEntry<Value>]
}

extension Cache {
    /// Returns the live values for those of `keys` that have one, in one bulk read when the cache is a
    /// ``BulkReadingCache``, otherwise one ``Cache/entry(forKey:)`` per distinct key.
    ///
    /// - Parameter keys: The keys to look up; duplicates are read once.
    /// - Returns: The live values by key; absent and expired keys are left out.
    /// - Throws: What ``Cache/entry(forKey:)`` throws; the first failure ends the call.
    /// - Complexity: O(*n*) reads for *n* distinct keys, or one bulk read.
    ///
    /// Thread-safe.
    public func values(forKeys keys: [Key]) async throws -> [Key: Value] {
        try await entriesReadOnce(forKeys: keys).mapValues(\.value)
    }

    /// The entries for `keys`, through a bulk read when the cache has one.
    @usableFromInline
    package func entriesReadOnce(forKeys keys: [Key]) async throws -> [Key: CacheEntry<Value>] {
        if let bulk = self as? any BulkReadingCache<Key, Value> {
            return try await bulk.entries(forKeys: keys)
        }
        var found: [Key: CacheEntry<Value>] = [:]
        var seen = Set<Key>()
        for key in keys where seen.insert(key).inserted {
            if let entry = try await entry(forKey: key) { found[key] = entry }
        }
        return found
    }

    /// The entry for `key` fresh or stale when the cache retains stale entries, else the live entry.
    @usableFromInline
    package func entryIncludingStaleIfRetained(forKey key: Key) async throws -> CacheEntry<Value>? {
        if let retaining = self as? any StaleRetainingCache<Key, Value> {
            return try await retaining.entryIncludingStale(forKey: key)
        }
        return try await entry(forKey: key)
    }
}

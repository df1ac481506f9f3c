import CacheCore
import RedisConnection

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RedisCache: StaleRetainingCache, BulkReadingCache {
    /// Returns the live entry for `key`, or an expired one stored with a later `CacheEntry/staleUntil`
    /// (the server's `PX` runs to that instant), for a load with `LoadOptions`; `nil` when there is neither.
    ///
    /// A plain ``entry(forKey:)`` never returns such a stale entry: it is a miss for it and left in place.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry with its expiry, stale-until instant and cost, or `nil`.
    /// - Throws: What ``entry(forKey:)`` throws.
    /// - Complexity: One round trip (`MGET`), plus O(*m*) decryption of the value.
    ///
    /// Thread-safe.
    public func entryIncludingStale(forKey key: Key) async throws -> CacheEntry<Value>? {
        try await readEntry(forKey: key, includingStale: true)
    }

    /// Returns the live entries for those of `keys` the namespace holds, in **one** `MGET` of the epoch
    /// counter and every entry.
    ///
    /// - Parameter keys: The keys to look up; duplicates are read once.
    /// - Returns: The live entries by key; absent, expired, older-epoch and unopenable entries are left out
    ///   (each counted as for ``entry(forKey:)``).
    /// - Throws: What ``entry(forKey:)`` throws; `.entryTooLarge` is not thrown (a key too long is never
    ///   stored, so it is read as a miss).
    /// - Complexity: One round trip, plus O(*m*) decryption per value.
    ///
    /// Thread-safe.
    public func entries(forKeys keys: [Key]) async throws -> [Key: CacheEntry<Value>] {
        var seen = Set<Key>()
        let unique = keys.filter { seen.insert($0).inserted }
        guard !unique.isEmpty else { return [:] }
        try await verifyMasterKey()
        let keyBytes = try unique.map { try Self.canonicalBytes(of: $0) }
        let names = try keyBytes.map { try entryName($0) }
        // Every name is registered before the read, as `entry(forKey:)` does: MultiCache writes bulk hits
        // back into the tiers above, and an invalidation of a name it cannot map back would be lost.
        for (name, key) in zip(names, unique) { invalidations.track(name, for: key) }
        let items = try await values(of: [self.keys.epochKey] + names)
        let epoch = try await effectiveEpoch(try Self.counterValue(items[0]))
        var found: [Key: CacheEntry<Value>] = [:]
        for (index, key) in unique.enumerated() {
            guard case .bulkString(let bytes) = items[index + 1] else {
                _ = countMiss()
                continue
            }
            if let entry = try await open(bytes, keyBytes: keyBytes[index], name: names[index], currentEpoch: epoch) {
                found[key] = entry
            }
        }
        return found
    }
}

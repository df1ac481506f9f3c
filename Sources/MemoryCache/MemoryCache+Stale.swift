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
}

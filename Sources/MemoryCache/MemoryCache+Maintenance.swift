import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MemoryCache {
    // MARK: - Counters

    /// A snapshot of the counters: hits, misses, insertions, evictions and expirations, and the loads of
    /// the load-once calls (`loads`, `loadsShared`). The other counters of `CacheStatistics` stay 0 here: a
    /// memory tier has no corrupt entries and no failing operations. What is held now is ``count`` and
    /// ``totalCost``.
    ///
    /// With several shards each shard is read under its own lock in turn, so the sum is not one atomic
    /// snapshot while other threads are writing.
    ///
    /// Thread-safe.
    ///
    /// - Complexity: O(*s*) in the number of shards.
    public var statistics: CacheStatistics {
        var statistics = shards.reduce(into: CacheStatistics()) { total, shard in
            let part = shard.withLock { $0.statistics }
            total.hits += part.hits
            total.misses += part.misses
            total.insertions += part.insertions
            total.evictions += part.evictions
            total.expirations += part.expirations
        }
        loadOnce.count(into: &statistics)
        return statistics
    }

    /// The number of entries held (a count of entries), including expired ones not yet dropped.
    ///
    /// Thread-safe.
    ///
    /// - Complexity: O(*s*) in the number of shards.
    public var count: Int {
        shards.reduce(0) { sum, shard in sum + shard.withLock { $0.count } }
    }

    /// The sum of the costs of the entries held, in the cost function's units, including expired ones not
    /// yet dropped.
    ///
    /// Each shard keeps its own total below `Int.max`; across several shards the sum saturates at
    /// `Int.max`.
    ///
    /// Thread-safe.
    ///
    /// - Complexity: O(*s*) in the number of shards.
    public var totalCost: Int {
        shards.reduce(0) { sum, shard in Self.saturatingSum(sum, shard.withLock { $0.totalCost }) }
    }

    // MARK: - Purging and trimming

    /// Removes every entry that has expired by the clock's current reading.
    ///
    /// Each removed entry counts as an expiration. Call it periodically to give memory back when many
    /// entries expire without being read again.
    ///
    /// Thread-safe.
    ///
    /// - Returns: The number of entries removed.
    /// - Complexity: O(*n*) in the number of entries held: every entry is visited, each shard under its
    ///   own lock for the length of its scan, so other callers on that shard wait meanwhile.
    @discardableResult
    public func removeExpired() -> Int {
        let now = clock.now.timeIntervalSinceReferenceDate
        var removed = 0
        for shard in shards {
            var released = ShardTable<Key, Value>.Released()
            removed += shard.withLock { $0.removeExpired(now: now, into: &released) }
            withExtendedLifetime(released) {}
        }
        return removed
    }

    /// Evicts entries in the policy's order (least recently used first under LRU; W-TinyLFU's main region
    /// before its window) until at most `count` remain; each counts as an eviction.
    ///
    /// This is the hook for memory pressure on platforms without a system memory-pressure source
    /// (Linux): call it when the process should give memory back. With several shards each shard keeps
    /// its share of `count`.
    ///
    /// Thread-safe; values are released after each shard's lock is dropped.
    ///
    /// - Parameter count: The most entries to keep (a count of entries); a negative value counts as 0.
    /// - Complexity: O(*s* + *k*) for *s* shards and *k* entries evicted.
    public func trim(toCount count: Int) {
        trimShards(to: count) { table, share, released in table.trim(toCount: share, into: &released) }
    }

    /// Evicts entries in the policy's order, as ``trim(toCount:)`` does, until the total cost is at most
    /// `cost`; each counts as an eviction.
    ///
    /// With several shards each shard keeps its share of `cost`.
    ///
    /// Thread-safe; values are released after each shard's lock is dropped.
    ///
    /// - Parameter cost: The highest total cost to keep, in the cost function's units (for example bytes);
    ///   a negative value counts as 0.
    /// - Complexity: O(*s* + *k*) for *s* shards and *k* entries evicted.
    public func trim(toCost cost: Int) {
        trimShards(to: cost) { table, share, released in table.trim(toCost: share, into: &released) }
    }

    /// Trims every shard to its share of `limit` (a negative limit counts as 0) with `trim`, releasing the
    /// evicted values after the shard's lock is dropped.
    private func trimShards(
        to limit: Int,
        _ trim: (ShardTable<Key, Value>, Int, inout ShardTable<Key, Value>.Released) -> Void
    ) {
        let limit = max(limit, 0)
        for (shardIndex, shard) in shards.enumerated() {
            var released = ShardTable<Key, Value>.Released()
            let share = Self.share(of: limit, forShard: shardIndex, of: shards.count) ?? 0
            shard.withLock { trim($0, share, &released) }
            withExtendedLifetime(released) {}
        }
    }

    /// `lhs + rhs` for non-negative totals, or `Int.max` where the sum would overflow.
    static func saturatingSum(_ lhs: Int, _ rhs: Int) -> Int {
        let (sum, overflow) = lhs.addingReportingOverflow(rhs)
        return overflow ? Int.max : sum
    }

    // MARK: - Debug checks

    /// Checks every shard's index, recency queue, free slots, totals and limits, for tests.
    ///
    /// - Returns: A description of the first violation found, or `nil` when the cache is consistent.
    /// - Complexity: O(*n*); each shard is locked for its own check.
    func invariantViolation() -> String? {
        for (shardIndex, shard) in shards.enumerated() {
            if let problem = shard.withLock({ $0.invariantViolation() }) {
                return "shard \(shardIndex): \(problem)"
            }
        }
        return nil
    }

    /// Whether every shard is consistent; see ``invariantViolation()``.
    func checkInvariants() -> Bool { invariantViolation() == nil }
}

import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MemoryCache: BulkReadingCache {
    /// Returns the live entries for those of `keys` the cache holds, each with its expiry, cost and
    /// stale-until instant, making each the most recently used.
    ///
    /// Thread-safe; one clock reading for the call and one lock per shard the keys fall in.
    ///
    /// - Parameter keys: The keys to look up; duplicates are read once.
    /// - Returns: The live entries by key.
    /// - Complexity: O(*n*) for *n* keys, plus O(*s*) for *s* shards.
    public func entries(forKeys keys: [Key]) -> [Key: CacheEntry<Value>] {
        var found: [Key: CacheEntry<Value>] = [:]
        found.reserveCapacity(keys.count)
        // Read once, hit or miss: `found` alone would let a repeated missing key count a miss each time.
        var read: Set<Key> = []
        readEach(keys, wantsCost: true, isRead: { !read.insert($0).inserted }) {
            key, value, expiresAt, cost, tagStamp, staleUntil in
            guard let value else { return }
            found[key] = CacheEntry(
                value: value, expiresAt: Self.date(fromSeconds: expiresAt), cost: cost,
                staleUntil: staleUntil.map { Date(timeIntervalSinceReferenceDate: $0) }, tags: tagStamp?.tags ?? [])
        }
        return found
    }

    /// Returns the live values for those of `keys` the cache holds, making each the most recently used.
    ///
    /// Faster than one ``value(forKey:)`` per key: the clock is read once for the call and each shard's
    /// lock taken once (with the default single shard, one lock for every key). A key listed twice is read
    /// twice (two hits in ``statistics``) and returned once: checking every key for repeats would cost a
    /// hash of each, as much as its read.
    ///
    /// Thread-safe; holds each shard's lock for its share of `keys`.
    ///
    /// - Parameter keys: The keys to look up.
    /// - Returns: The live values by key.
    /// - Complexity: O(*n*) for *n* keys, plus O(*s*) for *s* shards.
    @inlinable
    public func values(forKeys keys: [Key]) -> [Key: Value] {
        valuesAndMisses(forKeys: keys).values
    }

    /// Returns the live values for those of `keys` the cache holds and the keys it lacks, read like
    /// `values(forKeys:)`.
    ///
    /// Thread-safe; holds each shard's lock for its share of `keys`.
    ///
    /// - Parameter keys: The keys to look up.
    /// - Returns: The live values by key, and the keys without one: in the order of `keys` with one shard,
    ///   shard by shard with several (a key listed twice is there twice).
    /// - Complexity: O(*n*) for *n* keys, plus O(*s*) for *s* shards.
    @inlinable
    public func valuesAndMisses(forKeys keys: [Key]) -> (values: [Key: Value], missing: [Key]) {
        var found: [Key: Value] = [:]
        found.reserveCapacity(keys.count)
        var missing: [Key] = []
        readEach(keys, wantsCost: false, isRead: { _ in false }) { key, value, _, _, _, _ in
            if let value { found[key] = value } else { missing.append(key) }
        }
        return (found, missing)
    }

    /// Reads every key of `keys` for which `isRead` is false, at one clock reading, under one lock per
    /// shard, and calls `answer` for each with its value (`nil` on a miss), expiry, and (when `wantsCost`)
    /// its cost, tag stamp and stale-until instant; expired entries dropped here are released after the
    /// locks are dropped, as by ``value(forKey:)``.
    ///
    /// `isRead` and `answer` run with a shard's lock held: they must not call the cache.
    @inlinable
    func readEach(
        _ keys: [Key],
        wantsCost: Bool,
        isRead: (Key) -> Bool,
        answer: (Key, Value?, _ expiresAt: Double, _ cost: Int, _ tagStamp: TagStamp?, _ staleUntil: Double?) -> Void
    ) {
        // One reading for the whole call: the reads are one operation, as a plain read is.
        let now = clock.now.timeIntervalSinceReferenceDate
        var released: [Value] = []
        func read(_ key: Key, in table: inout ShardTable<Key, Value>) {
            guard !isRead(key) else { return }
            var value: Value?
            var expiresAt = Double.infinity
            var cost = 0
            var tagStamp: TagStamp?
            var staleUntil: Double?
            let status = table.read(
                key, now: now, wantsCost: wantsCost, value: &value, expiresAt: &expiresAt, cost: &cost,
                tagStamp: &tagStamp, staleUntil: &staleUntil)
            if status == .hit {
                answer(key, value, expiresAt, cost, tagStamp, staleUntil)
                return
            }
            if let value { released.append(value) }
            answer(key, nil, expiresAt, cost, tagStamp, staleUntil)
        }
        if shardCount == 1 {
            firstShard.withLock { table in
                for key in keys { read(key, in: &table) }
            }
        } else {
            // The keys grouped by shard with a counting sort, so that each lock is taken once and each key
            // visited once: a pass over every key per shard would cost O(keys × shards).
            let shardOfKey = keys.map { shardIndex(of: $0) }
            var starts = [Int](repeating: 0, count: shardCount + 1)
            for shard in shardOfKey { starts[shard + 1] += 1 }
            for shard in 0..<shardCount { starts[shard + 1] += starts[shard] }
            var next = starts
            var byShard = [Int](repeating: 0, count: keys.count)
            for (index, shard) in shardOfKey.enumerated() {
                byShard[next[shard]] = index
                next[shard] += 1
            }
            for shard in 0..<shardCount where starts[shard] < starts[shard + 1] {
                shards[shard].withLock { table in
                    for position in starts[shard]..<starts[shard + 1] { read(keys[byShard[position]], in: &table) }
                }
            }
        }
        // The expired values leave here, after every lock is dropped.
        withExtendedLifetime(released) {}
    }
}

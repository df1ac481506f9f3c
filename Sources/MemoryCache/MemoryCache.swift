import CacheCore
import Foundation

/// A fast, thread-safe in-memory cache that evicts the least recently used entries to stay within a
/// count limit and a cost limit, and never returns an expired entry.
///
/// ```swift
/// let thumbnails = try MemoryCache<URL, Data>(countLimit: 500, costLimit: 50_000_000) { $0.count }
/// thumbnails.setValue(data, forKey: url, expiry: .seconds(600))
/// if let cached = thumbnails[url] { show(cached) }
/// ```
///
/// ## Eviction
/// Reads and writes make an entry the most recently used. When an insertion takes the cache over a
/// limit, entries are evicted from the least recently used end until it is within both limits again;
/// the entry just written is never evicted by its own insertion. With the default `shardCount` of 1 the
/// order is exact LRU. The list is intrusive and kept in one contiguous buffer indexed by a hash table,
/// so reads, writes, removals and each eviction are O(1) on average.
///
/// ## Limits
/// `nil` means unlimited, 0 means the cache keeps nothing, a negative limit is rejected. An entry whose
/// own cost exceeds the cost limit is not stored and evicts nothing; the earlier entry for its key is
/// removed, because the caller replaced it. Negative costs count as 0. ``totalCost`` is always the sum
/// of the costs of the entries held.
///
/// ## Expiry
/// Each entry carries an absolute expiry instant. It is returned while ``clock`` reads strictly earlier
/// than that instant and never from that instant on. Reads never extend it. Expired entries are dropped
/// lazily when a read finds them (counted as an expiration and a miss) and by ``removeExpired()``.
/// An entry that was dropped stays gone if the clock later moves back; one that expired but was never
/// looked at is judged by the clock as it reads when it is next looked at.
///
/// ## Thread safety
/// Every method may be called from any thread at the same time. Each shard's state sits behind one
/// lock held for a single table operation. The cost function and the clock are called before the lock
/// is taken, and values that leave the cache are released after it is dropped, so a value's `deinit`,
/// the cost function and the clock may all use the cache themselves.
///
/// The synchronous methods also witness the `async` requirements of ``Cache``, so the cache can be
/// handed to code written against `any Cache<Key, Value>`; nothing here waits.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Cache {
    /// The clock that decides expiry; relative ``Expiry`` values are resolved against it at write time.
    public let clock: any CacheClock
    /// The most entries the cache keeps, or `nil` for no limit.
    public let countLimit: Int?
    /// The highest total cost the cache keeps, or `nil` for no limit.
    public let costLimit: Int?
    /// The expiry given to values stored without one.
    public let defaultExpiry: Expiry
    /// The number of independent LRU tables the cache is split into (1 for exact LRU).
    ///
    /// This can be smaller than the `shardCount` passed at creation: it never exceeds a non-zero count
    /// or cost limit, so that every shard can hold at least one entry.
    public let shardCount: Int

    private let costFunction: @Sendable (Value) -> Int
    let shards: [Locked<LRUTable<Key, Value>>]
    private let memoryPressureMonitor: MemoryPressureMonitor

    /// Creates an empty cache.
    ///
    /// - Parameters:
    ///   - countLimit: The most entries to keep; `nil` (the default) for no limit, 0 to keep nothing.
    ///   - costLimit: The highest total cost to keep, in the units of `cost` (for example bytes); `nil`
    ///     (the default) for no limit, 0 to keep nothing.
    ///   - defaultExpiry: The expiry of values stored without one; `.never` by default.
    ///   - shardCount: The number of independent LRU tables, each owning the keys whose hash falls to it
    ///     and an equal share of each limit. 1 (the default) gives one exact LRU behind one lock; more
    ///     shards let threads work in parallel at the price of an approximate LRU order, and an entry is
    ///     then stored only if its cost fits its shard's share of the cost limit.
    ///   - clock: The clock that decides expiry; the system clock by default.
    ///   - cost: Computes a value's cost when none is given; 1 per entry by default. Called on the
    ///     caller's thread, outside the cache's lock. A negative result counts as 0.
    /// - Throws: ``CacheError/Code/invalidArgument`` when a limit is negative or `shardCount` is below 1.
    public init(
        countLimit: Int? = nil,
        costLimit: Int? = nil,
        defaultExpiry: Expiry = .never,
        shardCount: Int = 1,
        clock: any CacheClock = SystemClock(),
        cost: @escaping @Sendable (Value) -> Int = { _ in 1 }
    ) throws {
        if let countLimit, countLimit < 0 {
            throw CacheError(
                .invalidArgument, "countLimit must be nil (unlimited) or at least 0, but is \(countLimit)")
        }
        if let costLimit, costLimit < 0 {
            throw CacheError(
                .invalidArgument, "costLimit must be nil (unlimited) or at least 0, but is \(costLimit)")
        }
        guard shardCount >= 1 else {
            throw CacheError(.invalidArgument, "shardCount must be at least 1, but is \(shardCount)")
        }
        let effectiveShardCount = Self.effectiveShardCount(shardCount, countLimit: countLimit, costLimit: costLimit)
        let shards = (0..<effectiveShardCount).map { shard in
            Locked(
                LRUTable<Key, Value>(
                    countLimit: Self.share(of: countLimit, forShard: shard, of: effectiveShardCount),
                    costLimit: Self.share(of: costLimit, forShard: shard, of: effectiveShardCount)))
        }
        self.clock = clock
        self.countLimit = countLimit
        self.costLimit = costLimit
        self.defaultExpiry = defaultExpiry
        self.shardCount = effectiveShardCount
        self.costFunction = cost
        self.shards = shards
        self.memoryPressureMonitor = MemoryPressureMonitor(shards: shards)
    }

    // MARK: - Reading

    /// Returns the live value for `key`, or `nil` on a miss, and makes the entry the most recently used.
    ///
    /// An expired entry found here is removed and counted as an expiration and a miss. The clock is read
    /// only when the entry has an expiry.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value, or `nil` when the key is absent or its entry has expired.
    /// - Complexity: O(1) on average.
    public func value(forKey key: Key) -> Value? {
        if case .hit(let value, _, _) = lookup(key) { return value }
        return nil
    }

    /// Returns the live entry for `key` with its absolute expiry and cost, or `nil` on a miss, and makes
    /// the entry the most recently used.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry, or `nil` when the key is absent or its entry has expired.
    /// - Complexity: O(1) on average.
    public func entry(forKey key: Key) -> CacheEntry<Value>? {
        guard case .hit(let value, let expiresAt, let cost) = lookup(key) else { return nil }
        return CacheEntry(value: value, expiresAt: Self.date(fromSeconds: expiresAt), cost: cost)
    }

    /// Reads and writes the value for `key`, like ``value(forKey:)``, ``setValue(_:forKey:expiry:cost:)``
    /// with the default expiry, and ``removeValue(forKey:)`` when set to `nil`.
    ///
    /// - Parameter key: The key to read or write.
    /// - Complexity: O(1) on average, plus any evictions a write causes.
    public subscript(key: Key) -> Value? {
        get { value(forKey: key) }
        set {
            if let newValue {
                setValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    // MARK: - Writing

    /// Stores `value` under `key` as the most recently used entry, replacing any earlier entry, then
    /// evicts least recently used entries until the cache is within its limits.
    ///
    /// The value is not stored, and nothing is evicted, when the cache keeps nothing (a limit of 0),
    /// when its cost alone exceeds the cost limit, or when its expiry has already passed; in each case
    /// the earlier entry for `key` is removed, so a read never returns a value older than the last write.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - expiry: When the entry expires, resolved against ``clock`` now; `nil` for ``defaultExpiry``.
    ///   - cost: The entry's cost, or `nil` to compute it with the cache's cost function (called outside
    ///     the lock). A negative cost counts as 0.
    /// - Complexity: O(1) on average, plus O(1) per entry evicted.
    public func setValue(_ value: Value, forKey key: Key, expiry: Expiry? = nil, cost: Int? = nil) {
        let cost = max(cost ?? costFunction(value), 0)
        let expiresAt: Double
        let now: Double
        switch expiry ?? defaultExpiry {
        case .never:
            expiresAt = .infinity
            now = -.infinity
        case .after(let duration):
            now = clock.now.timeIntervalSinceReferenceDate
            expiresAt = now + duration.timeInterval
        case .at(let date):
            now = clock.now.timeIntervalSinceReferenceDate
            expiresAt = date.timeIntervalSinceReferenceDate
        }
        store(value, forKey: key, cost: cost, expiresAt: expiresAt, now: now)
    }

    /// Stores `entry` under `key` with its absolute expiry, replacing any earlier entry; see
    /// ``setValue(_:forKey:expiry:cost:)`` for eviction and for entries that are not stored.
    ///
    /// - Parameters:
    ///   - entry: The value with its absolute expiry and cost; a `nil` cost is computed with the cache's
    ///     cost function, outside the lock.
    ///   - key: The key to store it under.
    /// - Complexity: O(1) on average, plus O(1) per entry evicted.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) {
        let cost = max(entry.cost ?? costFunction(entry.value), 0)
        if let expiresAt = entry.expiresAt {
            store(
                entry.value, forKey: key, cost: cost, expiresAt: expiresAt.timeIntervalSinceReferenceDate,
                now: clock.now.timeIntervalSinceReferenceDate)
        } else {
            store(entry.value, forKey: key, cost: cost, expiresAt: .infinity, now: -.infinity)
        }
    }

    // MARK: - Removing

    /// Removes the entry for `key` and returns its value if it was live.
    ///
    /// - Parameter key: The key to remove.
    /// - Returns: The removed value, or `nil` when the key was absent or its entry had expired.
    /// - Complexity: O(1) on average.
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        guard let removed = shard(for: key).withLock({ $0.remove(key) }) else { return nil }
        if removed.expiresAt != .infinity && removed.expiresAt <= clock.now.timeIntervalSinceReferenceDate {
            return nil
        }
        return removed.value
    }

    /// Removes the entry for `key`, if there is one.
    ///
    /// - Parameter key: The key to remove.
    /// - Complexity: O(1) on average.
    public func removeEntry(forKey key: Key) {
        _ = shard(for: key).withLock { $0.remove(key) }
    }

    /// Removes every entry and gives the cache's storage back; the counters keep counting.
    ///
    /// Removed entries are not counted as evictions. Values are released after the lock is dropped.
    ///
    /// - Complexity: O(*n*) in the number of entries, spent outside the lock.
    public func removeAll() {
        for shard in shards {
            let old = shard.withLock { table in
                let old = table
                table = LRUTable(countLimit: old.countLimit, costLimit: old.costLimit, counters: old.counters)
                return old
            }
            // Releasing `old` here, outside the lock, deinitializes its entries.
            withExtendedLifetime(old) {}
        }
    }

    // MARK: - Internals

    /// Reads `key`, taking a clock reading only when its entry can expire.
    private func lookup(_ key: Key) -> LRUTable<Key, Value>.Lookup {
        let shard = shard(for: key)
        let first = shard.withLock { $0.readWithoutClock(key) }
        guard case .needsClock = first else { return first }
        let now = clock.now.timeIntervalSinceReferenceDate
        return shard.withLock { $0.read(key, now: now) }
    }

    private func store(_ value: Value, forKey key: Key, cost: Int, expiresAt: Double, now: Double) {
        let released = shard(for: key).withLock {
            $0.store(value, forKey: key, cost: cost, expiresAt: expiresAt, now: now)
        }
        // The replaced and evicted values are released here, after the lock is dropped.
        withExtendedLifetime(released) {}
    }

    @inline(__always)
    func shard(for key: Key) -> Locked<LRUTable<Key, Value>> {
        if shards.count == 1 { return shards[0] }
        return shards[Int(UInt(bitPattern: key.hashValue) % UInt(shards.count))]
    }

    static func date(fromSeconds seconds: Double) -> Date? {
        seconds == .infinity ? nil : Date(timeIntervalSinceReferenceDate: seconds)
    }
}

import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A fast, thread-safe in-memory cache that evicts the least recently used entries to stay within a
/// count limit and a cost limit, and never returns an expired entry.
///
/// ```swift
/// let thumbnails = try MemoryCache<URL, Data>(countLimit: 500, costLimit: 50_000_000) { $0.count }
/// try thumbnails.setValue(data, forKey: url, expiry: .seconds(600))
/// if let cached = thumbnails[url] { show(cached) }
/// ```
///
/// ## Eviction
/// The `policy` given at creation decides which entries stay: ``EvictionPolicy/leastRecentlyUsed`` (the
/// default, described here) or ``EvictionPolicy/windowTinyLFU``, which admits an entry to the main part
/// of the cache only if it has been used more often than the entry it would push out (see its
/// documentation and `Docs/MemoryCache.md`).
///
/// Reads and writes make an entry the most recently used. When an insertion takes the cache over a
/// limit, entries are evicted from the least recently used end until it is within both limits again;
/// the entry just written is never evicted by its own insertion. With the default `shardCount` of 1 the
/// order is exact LRU; each shard of a sharded cache evicts by second chance (CLOCK), an approximation
/// whose hits write no line the shard's other users share. The recency order is kept in contiguous
/// buffers indexed by a hash table, so reads, writes, removals and each eviction are O(1) on average
/// (amortized).
///
/// ## Limits
/// `nil` means unlimited, 0 means the cache keeps nothing, a negative limit is rejected. An entry whose
/// own cost exceeds the cost limit is not stored and evicts nothing; the earlier entry for its key is
/// removed, because the caller replaced it, and the write throws ``CacheError/Code/entryTooLarge`` (the
/// one error a write here throws; the subscript, which cannot throw, drops such a value silently). Negative costs count as 0. ``totalCost`` is always the sum
/// of the costs of the entries held.
///
/// ## Expiry
/// Each entry carries an absolute expiry instant. It is returned while ``clock`` reads strictly earlier
/// than that instant and never from that instant on. Reads never extend it. Expired entries are dropped
/// lazily when a read finds them (counted as an expiration and a miss) and by ``removeExpired()``.
/// An entry that was dropped stays gone if the clock later moves back; one that expired but was never
/// looked at is judged by the clock as it reads when it is next looked at.
///
/// ## Memory pressure
/// On Apple platforms the cache listens to the system's memory-pressure source: a warning trims each
/// shard to half its entries, a critical event empties it (both count as evictions). Linux has no such
/// source; call ``trim(toCount:)`` or ``trim(toCost:)`` yourself.
///
/// ## Thread safety
/// Every method may be called from any thread at the same time. Each shard's state sits behind one
/// lock held for a single table operation. The cost function and the clock are called before the lock
/// is taken, and values that leave the cache are released after it is dropped, so a value's `deinit`,
/// the cost function and the clock may all use the cache themselves.
///
/// The synchronous methods also witness the `async` requirements of ``Cache``, so the cache can be
/// handed to code written against `any Cache<Key, Value>`; nothing here waits. A call on a
/// `MemoryCache` picks the synchronous method in `async` code too (`memory.value(forKey: key)` needs no
/// `await`); through `any Cache` the same call is `try await` (see ``Cache``, "Which overload a call
/// picks").
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: SynchronousCache {
    /// The clock that decides expiry; relative ``Expiry`` values are resolved against it at write time.
    public let clock: any CacheClock
    /// The most entries the cache keeps (a count of entries), or `nil` for no limit; 0 keeps nothing.
    public let countLimit: Int?
    /// The highest total cost the cache keeps, in the units of the cost function (for example bytes), or
    /// `nil` for no limit; 0 keeps nothing.
    public let costLimit: Int?
    /// The expiry given to values stored without one (by ``setValue(_:forKey:expiry:)`` with a `nil`
    /// expiry, or the subscript setter).
    public let defaultExpiry: Expiry
    /// How the cache chooses which entries to keep when it is over a limit.
    public let policy: EvictionPolicy
    /// The number of independent LRU tables the cache is split into (1 for exact LRU).
    ///
    /// This can be smaller than the `shardCount` passed at creation: it never exceeds a non-zero count
    /// or cost limit, so that every shard can hold at least one entry.
    public let shardCount: Int

    @usableFromInline let costFunction: @Sendable (Value) -> Int
    /// Whether lookups read the clock before taking the lock: true when values get an expiry by default,
    /// so that most reads need the clock and one locked pass is cheaper than two.
    @usableFromInline let readsClockFirst: Bool
    @usableFromInline let shards: [Locked<ShardTable<Key, Value>>]
    /// `shards[0]`, read without an array access on the common one-shard path.
    @usableFromInline let firstShard: Locked<ShardTable<Key, Value>>
    /// Unretained references to `shards`, freed in `deinit`; `shards` keeps the objects alive.
    @usableFromInline let shardReferences: ShardReferences
    private let memoryPressureMonitor: MemoryPressureMonitor
    /// The version counter of every tag this cache has seen.
    let tagRegistry: TagRegistry
    /// Load-once for the load calls (MemoryCache+LoadHosting.swift), created by the first load, so that a
    /// cache that never loads pays one atomic load per write or removal for it and nothing per read.
    @usableFromInline let loadOnce = TierLoadOnce<Key, Value>()

    /// Creates an empty cache.
    ///
    /// Thread-safe to use from any thread once created.
    ///
    /// - Parameters:
    ///   - countLimit: The most entries to keep; `nil` (the default) for no limit, 0 to keep nothing.
    ///     Whatever the limit, a shard keeps at most 2^30 − 2 entries, and at most 2^28 − 1 under
    ///     ``EvictionPolicy/windowTinyLFU``.
    ///   - costLimit: The highest total cost to keep, in the units of `cost` (for example bytes); `nil`
    ///     (the default) for no limit, 0 to keep nothing.
    ///   - defaultExpiry: The expiry of values stored without one; `.never` by default.
    ///   - shardCount: The number of independent LRU tables, each owning the keys whose hash falls to it
    ///     and an equal share of each limit. 1 (the default) gives one exact LRU behind one lock; more
    ///     shards let threads work in parallel at the price of an approximate LRU order (second chance
    ///     within each shard), and an entry is then stored only if its cost fits its shard's share of the
    ///     cost limit. 64 suits a few threads sharing one cache.
    ///   - policy: How to choose which entries to keep: ``EvictionPolicy/leastRecentlyUsed`` (the default)
    ///     or ``EvictionPolicy/windowTinyLFU``, which keeps frequently used entries through scans and
    ///     usually hits more often. With several shards each shard runs the policy on its share of the
    ///     limits.
    ///   - clock: The clock that decides expiry; the system clock by default.
    ///   - cost: Computes a value's cost when none is given; 1 per entry by default. Called on the
    ///     caller's thread, outside the cache's lock. A negative result counts as 0.
    /// - Throws: ``CacheError/Code/invalidArgument`` when a limit is negative or `shardCount` is below 1.
    /// - Complexity: O(*s*) in the number of shards actually used; no storage is reserved for entries.
    public init(
        countLimit: Int? = nil,
        costLimit: Int? = nil,
        defaultExpiry: Expiry = .never,
        shardCount: Int = 1,
        policy: EvictionPolicy = .leastRecentlyUsed,
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
        let tagRegistry = TagRegistry()
        let shards = (0..<effectiveShardCount).map { shard in
            Locked(
                ShardTable<Key, Value>(
                    countLimit: Self.share(of: countLimit, forShard: shard, of: effectiveShardCount),
                    costLimit: Self.share(of: costLimit, forShard: shard, of: effectiveShardCount),
                    approximatesRecency: effectiveShardCount > 1, policy: policy,
                    tagGeneration: tagRegistry.generation))
        }
        self.clock = clock
        self.tagRegistry = tagRegistry
        self.policy = policy
        self.countLimit = countLimit
        self.costLimit = costLimit
        self.defaultExpiry = defaultExpiry
        self.readsClockFirst = defaultExpiry != .never
        self.shardCount = effectiveShardCount
        self.costFunction = cost
        self.shards = shards
        self.firstShard = shards[0]
        self.shardReferences = ShardReferences(shards)
        self.memoryPressureMonitor = MemoryPressureMonitor(shards: shards)
    }

    deinit {
        shardReferences.deallocate()
    }

    // MARK: - Reading

    /// Returns the live value for `key`, or `nil` on a miss, and makes the entry the most recently used.
    ///
    /// An expired entry found here is removed and counted as an expiration and a miss. A cache whose
    /// ``defaultExpiry`` is `.never` reads the clock only for entries that carry an expiry; any other
    /// reads it once per lookup.
    ///
    /// Thread-safe; takes the key's shard lock once, or twice when the default expiry is `.never` and
    /// the entry carries an expiry.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value, or `nil` when the key is absent or its entry has expired.
    /// - Complexity: O(1) on average.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        var expiresAt = Double.infinity
        var cost = 0
        var tagStamp: TagStamp?
        var staleUntil: Double?
        var now = -Double.infinity
        return lookup(
            key, wantsCost: false, expiresAt: &expiresAt, cost: &cost, tagStamp: &tagStamp, staleUntil: &staleUntil,
            now: &now)
    }

    /// Returns the live entry for `key` with its absolute expiry, cost and (for an entry a load with
    /// `LoadOptions` stored) its `CacheEntry/staleUntil`, or `nil` on a miss, and makes the entry the most
    /// recently used.
    ///
    /// Thread-safe; locks like ``value(forKey:)``.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry, or `nil` when the key is absent or its entry has expired.
    /// - Complexity: O(1) on average.
    @inlinable
    public func entry(forKey key: Key) -> CacheEntry<Value>? {
        var expiresAt = Double.infinity
        var cost = 0
        var tagStamp: TagStamp?
        var staleUntil: Double?
        var now = -Double.infinity
        guard
            let value = lookup(
                key, wantsCost: true, expiresAt: &expiresAt, cost: &cost, tagStamp: &tagStamp, staleUntil: &staleUntil,
                now: &now)
        else { return nil }
        return CacheEntry(
            value: value, expiresAt: Self.date(fromSeconds: expiresAt), cost: cost,
            staleUntil: staleUntil.map { Date(timeIntervalSinceReferenceDate: $0) }, tags: tagStamp?.tags ?? [])
    }

    /// Reads and writes the value for `key`, like ``value(forKey:)``, ``setValue(_:forKey:expiry:)``
    /// with the default expiry, and ``removeValue(forKey:)`` when set to `nil`.
    ///
    /// A subscript cannot throw: a value too large to keep is not stored, and the earlier one is removed,
    /// without an error. Call ``setValue(_:forKey:expiry:)`` to learn of it.
    ///
    /// Thread-safe, like the methods it stands for.
    ///
    /// - Parameter key: The key to read or write.
    /// - Returns: On get, the live value or `nil` on a miss.
    /// - Complexity: O(1) on average, plus O(1) per entry a write evicts.
    @inlinable
    public subscript(key: Key) -> Value? {
        get { value(forKey: key) }
        set {
            if let newValue {
                // A subscript cannot throw: an entry too large to keep is dropped here as by
                // `setValue(_:forKey:expiry:)`, which removes the earlier entry too, but is not reported.
                try? setValue(newValue, forKey: key)
            } else {
                removeValue(forKey: key)
            }
        }
    }

    // MARK: - Writing

    /// Stores `value` under `key` as the most recently used entry, replacing any earlier entry, then
    /// evicts the entries the policy chooses (least recently used ones under LRU) until the cache is
    /// within its limits; the cost comes from the cache's cost function.
    ///
    /// The value is not stored, and nothing is evicted, when the cache keeps nothing (a limit of 0),
    /// when its cost alone exceeds the cost limit, or when its expiry has already passed; in each case
    /// the earlier entry for `key` is removed, so a read never returns a value older than the last write.
    /// Only the oversized entry is an error: it is the one case where the caller's value was refused.
    /// Under ``EvictionPolicy/windowTinyLFU`` the entry enters a small window and then must win its room
    /// in the main region from entries used more often, so it may be evicted by this insertion or a later
    /// one without an error (counted as an insertion and an eviction), like any entry a policy evicts.
    ///
    /// Thread-safe; takes the key's shard lock once.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - expiry: When the entry expires, resolved against ``clock`` now; `nil` for ``defaultExpiry``.
    /// - Throws: ``CacheError/Code/entryTooLarge`` when the value's cost alone exceeds the cost limit (with
    ///   several shards, the shard's share of it); the earlier entry for `key` is then removed.
    /// - Complexity: O(1) on average, plus O(1) per entry evicted.
    @inlinable
    public func setValue(_ value: Value, forKey key: Key, expiry: Expiry? = nil) throws {
        try setValue(value, forKey: key, expiry: expiry, cost: costFunction(value))
    }

    /// Stores `value` under `key` with the cost the caller gives; otherwise as
    /// ``setValue(_:forKey:expiry:)``.
    ///
    /// Thread-safe; takes the key's shard lock once.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - expiry: When the entry expires, resolved against ``clock`` now; `nil` for ``defaultExpiry``.
    ///   - cost: The entry's cost, in the units of the cost limit; a negative cost counts as 0.
    /// - Throws: ``CacheError/Code/entryTooLarge`` when `cost` alone exceeds the cost limit (with several
    ///   shards, the shard's share of it); the earlier entry for `key` is then removed.
    /// - Complexity: O(1) on average, plus O(1) per entry evicted.
    @inlinable
    public func setValue(_ value: Value, forKey key: Key, expiry: Expiry? = nil, cost: Int) throws {
        let (expiresAt, now) = instants(of: expiry)
        try store(value, forKey: key, cost: max(cost, 0), expiresAt: expiresAt, now: now)
    }

    /// The absolute expiry of an entry written now with `expiry` (``defaultExpiry`` when `nil`), and the
    /// clock's reading it was resolved against (`-infinity`, unread, for an entry that never expires), in
    /// seconds since the reference date.
    @inlinable
    func instants(of expiry: Expiry?) -> (expiresAt: Double, now: Double) {
        switch expiry ?? defaultExpiry {
        case .never:
            return (.infinity, -.infinity)
        case .after(let duration):
            let now = clock.now.timeIntervalSinceReferenceDate
            return (now + duration.timeInterval, now)
        case .at(let date):
            return (date.timeIntervalSinceReferenceDate, clock.now.timeIntervalSinceReferenceDate)
        }
    }

    /// Stores `entry` under `key` with its absolute expiry, replacing any earlier entry; see
    /// ``setValue(_:forKey:expiry:)`` for eviction and for entries that are not stored.
    ///
    /// Thread-safe; takes the key's shard lock once.
    ///
    /// - Parameters:
    ///   - entry: The value with its absolute expiry and cost; a `nil` cost is computed with the cache's
    ///     cost function, outside the lock.
    ///   - key: The key to store it under.
    /// - Throws: ``CacheError/Code/entryTooLarge`` when the entry's cost alone exceeds the cost limit; the
    ///   earlier entry for `key` is then removed.
    /// - Complexity: O(1) on average, plus O(1) per entry evicted.
    @inlinable
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) throws {
        guard entry.tags.isEmpty else { return try setTaggedEntry(entry, forKey: key, taggedAt: nil) }
        let cost = max(entry.cost ?? costFunction(entry.value), 0)
        if let expiresAt = entry.expiresAt {
            try store(
                entry.value, forKey: key, cost: cost, expiresAt: expiresAt.timeIntervalSinceReferenceDate,
                now: clock.now.timeIntervalSinceReferenceDate,
                staleUntil: entry.staleUntil?.timeIntervalSinceReferenceDate)
        } else {
            try store(entry.value, forKey: key, cost: cost, expiresAt: .infinity, now: -.infinity)
        }
    }

    // MARK: - Removing

    /// Removes the entry for `key` and returns its value if it was live.
    ///
    /// An expired entry, or one a tag removal ended (``removeAll(taggedWith:)``), is removed too (without
    /// counting as an expiration) and `nil` is returned. The clock is read after the lock is dropped, only
    /// when the entry carried an expiry.
    ///
    /// Thread-safe; takes the key's shard lock once.
    ///
    /// - Parameter key: The key to remove.
    /// - Returns: The removed value, or `nil` when the key was absent, its entry had expired, or one of its
    ///   tags was removed since it was stored.
    /// - Complexity: O(1) on average.
    @inlinable
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        var removedEntry: (value: Value, expiresAt: Double, tagRemoved: Bool)?
        fenced(key) { removedEntry = withTable(for: key, { $0.remove(key) }) }
        // An entry a tag removal ended is no longer the key's value: `value(forKey:)` would not return it.
        guard let removed = removedEntry, !removed.tagRemoved else { return nil }
        if removed.expiresAt != .infinity && removed.expiresAt <= clock.now.timeIntervalSinceReferenceDate {
            return nil
        }
        return removed.value
    }

    /// Removes the entry for `key`, if there is one, expired or not; removing an absent key does nothing.
    ///
    /// Thread-safe; takes the key's shard lock once.
    ///
    /// - Parameter key: The key to remove.
    /// - Complexity: O(1) on average.
    @inlinable
    public func removeEntry(forKey key: Key) {
        fenced(key) { _ = withTable(for: key) { $0.remove(key) } }
    }

    /// Removes every entry and gives the cache's storage back; the counters keep counting.
    ///
    /// Removed entries are not counted as evictions. Values are released after the lock is dropped.
    ///
    /// Thread-safe; each shard is swapped for an empty one under its lock.
    ///
    /// - Complexity: O(*n*) in the number of entries, spent outside the lock.
    public func removeAll() {
        fenced(nil) { emptyEveryShard() }
    }

    /// Swaps each shard for an empty one, releasing the old entries outside the locks.
    private func emptyEveryShard() {
        for shard in shards {
            let old = shard.withLock { table in
                let old = table
                table = old.emptied()
                return old
            }
            // Releasing `old` here, outside the lock, deinitializes its entries.
            withExtendedLifetime(old) {}
        }
    }

    // MARK: - Internals

    /// Reads `key`, reading the clock (outside the lock) first when most entries are expected to expire,
    /// and otherwise only after the table reports that the entry can expire.
    ///
    /// Returns the value of a hit and fills in its expiry, the clock reading taken (left alone when none
    /// was) and, when `wantsCost`, its cost, tag stamp and stale-until instant; an expired entry's value is
    /// released here, after the lock is dropped.
    @inlinable
    func lookup(
        _ key: Key, wantsCost: Bool, expiresAt: inout Double, cost: inout Int, tagStamp: inout TagStamp?,
        staleUntil: inout Double?, now: inout Double
    ) -> Value? {
        var value: Value?
        if !readsClockFirst {
            let status = withTable(for: key) {
                $0.readWithoutClock(
                    key, wantsCost: wantsCost, value: &value, expiresAt: &expiresAt, cost: &cost, tagStamp: &tagStamp)
            }
            if status == .hit { return value }
            if status != .needsClock { return nil }
        }
        now = clock.now.timeIntervalSinceReferenceDate
        let status = withTable(for: key) {
            $0.read(
                key, now: now, wantsCost: wantsCost, value: &value, expiresAt: &expiresAt, cost: &cost,
                tagStamp: &tagStamp, staleUntil: &staleUntil)
        }
        return status == .hit ? value : nil
    }

    /// Stores an entry, fencing loads of `key` in flight (see ``fenced(_:_:)``).
    @inlinable
    func store(
        _ value: Value, forKey key: Key, cost: Int, expiresAt: Double, now: Double, staleUntil: Double? = nil,
        tagStamp: TagStamp? = nil
    ) throws {
        // Checked inline: a cache that never loads writes without forming a closure or making a call.
        guard loadOnce.isActive else {
            return try storeUnfenced(
                value, forKey: key, cost: cost, expiresAt: expiresAt, now: now, staleUntil: staleUntil,
                tagStamp: tagStamp)
        }
        try fenced(key) {
            try storeUnfenced(
                value, forKey: key, cost: cost, expiresAt: expiresAt, now: now, staleUntil: staleUntil,
                tagStamp: tagStamp)
        }
    }

    @inlinable
    func storeUnfenced(
        _ value: Value, forKey key: Key, cost: Int, expiresAt: Double, now: Double, staleUntil: Double? = nil,
        tagStamp: TagStamp? = nil
    ) throws {
        let (released, limit) = withTable(for: key) { table in
            // A table that keeps nothing (a limit of 0) refuses every entry without an error, as a disk
            // tier does; only an entry that alone exceeds a limit that keeps something is refused loudly.
            let tooLarge = table.countLimit != 0 && table.costLimit != 0 && cost > table.costLimit
            return (
                table.store(
                    value, forKey: key, cost: cost, expiresAt: expiresAt, now: now, staleUntil: staleUntil,
                    tagStamp: tagStamp),
                tooLarge ? table.costLimit : nil
            )
        }
        // The replaced and evicted values are released here, after the lock is dropped.
        withExtendedLifetime(released) {}
        if let limit { throw Self.entryTooLarge(cost: cost, limit: limit, cacheLimit: costLimit, shards: shardCount) }
    }

    /// The error of an entry whose cost alone exceeds its shard's cost limit `limit`; a sharded cache
    /// names the cache's limit `cacheLimit` and its `shards` too, since each shard holds only its share.
    @usableFromInline
    static func entryTooLarge(cost: Int, limit: Int, cacheLimit: Int?, shards: Int) -> CacheError {
        let bound =
            shards > 1
            ? "its shard's share (\(limit)) of the cache's cost limit of \(cacheLimit ?? limit) over \(shards) shards"
            : "the cache's cost limit of \(limit)"
        return CacheError(
            .entryTooLarge,
            "entry of cost \(cost) exceeds \(bound); it was not stored and the earlier entry for its key was removed")
    }

    /// Runs `body` on the table that owns `key`, with that table's lock held.
    ///
    /// Inlinable, with `Locked.withLock`, so that the lock, the table code and the caller's closure are
    /// all specialized for the caller's key and value types and inlined into one function.
    @inlinable
    func withTable<Result>(for key: Key, _ body: (inout ShardTable<Key, Value>) -> Result) -> Result {
        if shardCount == 1 { return firstShard.withLock(body) }
        let shardIndex = shardIndex(of: key)
        // Borrowed, not retained: two threads retaining and releasing the same shard object would write
        // its reference count, one cache line, from both cores on every operation. Sound: `shards`, a
        // `let` of this cache, holds a strong reference to every shard for as long as the cache lives,
        // and `self` is alive for the duration of this call.
        return shardReferences[shardIndex]._withUnsafeGuaranteedRef { object in
            // Sound: `init` fills `shardReferences` from `shards`, whose elements are all of this type.
            unsafeDowncast(object, to: Locked<ShardTable<Key, Value>>.self).withLock(body)
        }
    }

    /// The index of the shard that owns `key`, for a cache of more than one shard.
    @inlinable
    func shardIndex(of key: Key) -> Int {
        // Multiply-shift maps the (uniformly mixed) hash onto 0..<shardCount without a division.
        Int(UInt(bitPattern: key.hashValue).multipliedFullWidth(by: UInt(shardCount)).high)
    }

    @inlinable
    static func date(fromSeconds seconds: Double) -> Date? {
        seconds == .infinity ? nil : Date(timeIntervalSinceReferenceDate: seconds)
    }
}

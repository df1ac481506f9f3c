import CacheCore

/// One entry in a table's recency queue: slot `slot` was used when the table's tick read `stamp`.
///
/// Not nested in the generic `ShardTable`: a nested type would be generic too, and unspecialized code
/// (reached through `any Cache`) would look its metadata up at run time on every access.
@usableFromInline
struct RecencyRecord {
    @usableFromInline var slot: Int32
    @usableFromInline var stamp: UInt32

    @inlinable
    init(slot: Int32, stamp: UInt32) {
        self.slot = slot
        self.stamp = stamp
    }
}

/// The engine of one ``MemoryCache`` shard: a hash index from each key to its entry, and an exact LRU
/// order kept as a queue of use records, oldest first.
///
/// Not thread-safe on its own: ``MemoryCache`` keeps each table inside a `Locked`, and every method here
/// runs with that lock held. Methods never call user code (cost functions, clocks); values that leave
/// the table are handed back to the caller so that their last release happens after the lock is dropped.
///
/// ## Why a queue and not a linked list
/// The cost of a hit is memory traffic, not instructions. The index holds the value and expiry inline
/// (`Entry`), so a hit reads the same dictionary lines a plain `[Key: Value]` would. A doubly-linked
/// recency list then costs three more scattered lines per hit (the entry's links and both neighbours',
/// wherever they are): with the links in the nodes a hit missed the last-level cache 2.4 times against
/// the dictionary's 1.25, a third of them write misses, and with the links in their own array it still
/// missed about 3 times in a 2 MiB level-2 cache. Here a hit instead writes the next tick into its slot's
/// stamp (4 bytes a slot: 400 KB for 100k entries, which stays in the level-2 cache) and appends a
/// record to the queue, a sequential write.
///
/// The least recently used entry is the oldest record whose stamp still matches its slot's: every later
/// use of that slot left a newer record and a newer stamp, so the older records are stale and are
/// skipped. This is the same order an exact doubly-linked LRU keeps (Knuth's "move to front" list):
/// use makes an entry the newest, eviction takes the one used longest ago. Stale records are dropped
/// by compaction once the queue holds about twice as many records as entries, so each use costs O(1)
/// amortized and the queue stays within a constant factor of the entry count. When the ticks reach the
/// stamp's top bit they restart: the current records are numbered again from 1 and the stale ones
/// dropped, so that no record's tick comes round again while it is queued.
///
/// Slots `0..<used` are each either live (named by one index entry, `keys` initialized, stamp non-zero)
/// or free (on `freeSlots`, `keys` uninitialized, stamp 0); slots from `used` to `capacity` are
/// uninitialized.
@usableFromInline
final class ShardTable<Key: Hashable, Value> {
    /// What the index holds for a key: the value and the slot, 4 bytes beside the value so that the
    /// index's value storage stays as small as it can (16 bytes a key for an `Int` value).
    @usableFromInline
    struct Entry {
        @usableFromInline var value: Value
        /// The slot number in the low 31 bits; the top bit is set when the entry can expire, and its
        /// expiry is then in `expiries`. A never-expiring entry (the common case) needs no second read.
        @usableFromInline var slotAndFlag: UInt32

        @inlinable
        init(value: Value, slot: Int32, canExpire: Bool, isTagged: Bool = false) {
            self.value = value
            self.slotAndFlag =
                UInt32(truncatingIfNeeded: slot) | (canExpire ? Self.canExpireBit : 0) | (isTagged ? Self.taggedBit : 0)
        }

        @inlinable static var canExpireBit: UInt32 { 1 << 31 }
        /// Set when the entry carries tags, whose stamp is then in `tagStamps`: an untagged hit tests one
        /// bit of a word it reads anyway.
        @inlinable static var taggedBit: UInt32 { 1 << 30 }

        /// The entry's slot in `stamps`, `keys`, `costs` and `expiries`.
        @inlinable var slot: Int32 { Int32(truncatingIfNeeded: slotAndFlag & ~(Self.canExpireBit | Self.taggedBit)) }

        /// Whether the entry carries tags.
        @inlinable var isTagged: Bool { slotAndFlag & Self.taggedBit != 0 }

        /// Whether the entry has a finite expiry, stored in `expiries`.
        @inlinable var canExpire: Bool { slotAndFlag & Self.canExpireBit != 0 }
    }

    /// Values that left the table during one operation, released by the caller after unlocking.
    @usableFromInline
    struct Released {
        @usableFromInline var first: Value?
        @usableFromInline var rest: [Value] = []

        @inlinable init() {}

        @inlinable mutating func append(_ value: Value?) {
            guard let value else { return }
            if first == nil { first = value } else { rest.append(value) }
        }
    }

    @inlinable static var none: Int32 { -1 }
    /// The most slots a table can address with `Int32` slot numbers.
    static var maximumSlots: Int { (1 << 30) - 1 }

    /// The most entries a table of `policy` holds, whatever its count limit: one slot fewer than
    /// ``maximumSlots`` (an insertion stores the new entry before evicting); for W-TinyLFU, fewer than
    /// 2^28, so that the ticks its restart gives (one per entry, `renumberRegionQueues`) leave at
    /// least 2^28 of its 29-bit ticks before the next.
    static func maximumEntries(for policy: EvictionPolicy) -> Int {
        policy == .windowTinyLFU ? (1 << 28) - 1 : maximumSlots - 1
    }

    /// The most entries this table keeps (its share of the cache's count limit).
    @usableFromInline let countLimit: Int
    /// The highest total cost this table keeps (its share of the cache's cost limit).
    @usableFromInline let costLimit: Int
    /// The eviction policy this table runs and how it keeps recency (see ``ShardPolicy``): every
    /// policy-specific step is one `switch` over it, in `ShardTable+Policy.swift`.
    @usableFromInline let policy: ShardPolicy

    // `@exclusivity(unchecked)`: a class's stored properties otherwise get a dynamic exclusivity check
    // (a runtime call and a thread-local lookup) on every access, about a tenth of a cache hit. Skipping
    // it is safe: every access runs under the shard's lock, and no method overlaps two accesses to one
    // property.
    @usableFromInline @exclusivity(unchecked) var index: [Key: Entry] = [:]
    /// Per slot: the tick of the slot's latest use, 0 for a free slot; in an approximate table, plus
    /// `referencedBit` once a hit has used the slot since that tick.
    @usableFromInline @exclusivity(unchecked) var stamps: UnsafeMutablePointer<UInt32>
    @usableFromInline @exclusivity(unchecked) var keys: UnsafeMutablePointer<Key>
    @usableFromInline @exclusivity(unchecked) var costs: UnsafeMutablePointer<Int>
    /// Per slot: the expiry in seconds since the reference date (2001-01-01 UTC), written and read only
    /// for entries that can expire.
    @usableFromInline @exclusivity(unchecked) var expiries: UnsafeMutablePointer<Double>
    @usableFromInline @exclusivity(unchecked) var capacity: Int
    @usableFromInline @exclusivity(unchecked) var used = 0
    @usableFromInline @exclusivity(unchecked) var freeSlots: [Int32] = []
    /// Use records, oldest first, from `queueStart` on; records before `queueStart` are spent.
    @usableFromInline @exclusivity(unchecked) var queue: [RecencyRecord] = []
    @usableFromInline @exclusivity(unchecked) var queueStart = 0
    /// The stamp of the latest use; counts uses from 1 (0 marks a free slot), restarting when it reaches
    /// the stamp's flag bits (`renumberQueue`, `renumberRegionQueues`).
    @usableFromInline @exclusivity(unchecked) var tick: UInt32 = 0
    @usableFromInline @exclusivity(unchecked) var totalCost = 0
    /// Counters; the totals are ``count`` and `totalCost`.
    @usableFromInline @exclusivity(unchecked) var counters = CacheStatistics()
    /// The W-TinyLFU state when `policy` is a W-TinyLFU one; otherwise a minimal, unused one. Its regions'
    /// queues replace `queue`, which such a table leaves empty.
    @usableFromInline @exclusivity(unchecked) var frequencyPolicy: WindowTinyLFU
    /// Per slot, for the few entries a load with `LoadOptions` stored: the instant (seconds since the
    /// reference date) until which the entry is kept after its expiry, to be served stale by such loads
    /// only. A side table so that entries without one cost nothing.
    @usableFromInline @exclusivity(unchecked) var staleUntils: [Int32: Double] = [:]
    /// Per slot, for tagged entries only: the versions of the entry's tags when it was stored. A side
    /// table, like `staleUntils`, so that untagged entries cost nothing.
    @usableFromInline @exclusivity(unchecked) var tagStamps: [Int32: TagStamp] = [:]
    /// Per slot, for tagged entries only: the cache's tag generation when the entry's stamp was last
    /// found current (0 for never). While no tag has been removed since, a hit needs only this word and
    /// the generation, not the stamp's counters. Allocated with the first tagged entry.
    @usableFromInline @exclusivity(unchecked) var tagChecks: UnsafeMutablePointer<UInt64>?
    /// The cache's tag generation, advanced by every tag removal; shared by all of a cache's shards.
    @usableFromInline let tagGeneration: TagGeneration

    /// Creates an empty table.
    ///
    /// - Parameters:
    ///   - countLimit: The most entries to keep, `nil` for no limit; never negative.
    ///   - costLimit: The highest total cost to keep, `nil` for no limit; never negative.
    ///   - approximatesRecency: Whether hits mark entries for a second chance instead of moving them
    ///     (true for the shards of a sharded cache, whose order is approximate anyway).
    ///   - policy: The eviction policy.
    ///   - counters: Counters carried over from a table this one replaces.
    init(
        countLimit: Int?, costLimit: Int?, approximatesRecency: Bool = false,
        policy: EvictionPolicy = .leastRecentlyUsed, counters: CacheStatistics = CacheStatistics(),
        tagGeneration: TagGeneration = TagGeneration()
    ) {
        self.tagGeneration = tagGeneration
        let maximumEntries = Self.maximumEntries(for: policy)
        self.countLimit = min(countLimit ?? Int.max, maximumEntries)
        self.costLimit = costLimit ?? Int.max
        self.policy = ShardPolicy(policy, sharded: approximatesRecency)
        self.counters = counters
        capacity = min(8, self.countLimit + 1)
        frequencyPolicy = WindowTinyLFU(
            countLimit: self.countLimit, costLimit: self.costLimit, unlimitedCount: maximumEntries,
            slotCapacity: self.policy.admitsByFrequency ? capacity : 0, isShard: approximatesRecency)
        stamps = .allocate(capacity: capacity)
        keys = .allocate(capacity: capacity)
        costs = .allocate(capacity: capacity)
        expiries = .allocate(capacity: capacity)
    }

    deinit {
        for entry in index.values {
            (keys + Int(entry.slot)).deinitialize(count: 1)
        }
        stamps.deallocate()
        keys.deallocate()
        costs.deallocate()
        expiries.deallocate()
        tagChecks?.deallocate()
        frequencyPolicy.deallocate()
    }

    var count: Int { index.count }

    /// A snapshot of the counters, with the hits a policy has buffered and not yet counted.
    var statistics: CacheStatistics {
        var statistics = counters
        statistics.hits += pendingHitCount
        return statistics
    }

    /// An empty table with this one's limits and counters, to swap in for `removeAll()`.
    func emptied() -> ShardTable {
        ShardTable(
            countLimit: countLimit, costLimit: costLimit, approximatesRecency: policy.isSharded,
            policy: policy.evictionPolicy, counters: statistics, tagGeneration: tagGeneration)
    }
}

/// `@unchecked Sendable` is sound: a table is made in `MemoryCache.init` and handed at once to the `Locked`
/// that guards it; it is reached only inside that lock's `withLock`, which never returns or stores a
/// reference to it. What it holds of its own, keys and values, is `Sendable`.
extension ShardTable: @unchecked Sendable where Key: Sendable, Value: Sendable {}

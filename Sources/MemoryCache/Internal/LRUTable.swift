import CacheCore

/// The engine of one ``MemoryCache`` shard: a hash index into an intrusive doubly-linked LRU list whose
/// nodes live in one contiguous buffer and link to each other by 32-bit slot numbers.
///
/// Not thread-safe on its own: ``MemoryCache`` keeps each table inside a `Locked`, and every method here
/// runs with that lock held. Methods never call user code (cost functions, clocks); values that leave
/// the table are handed back to the caller so that their last release happens after the lock is dropped.
///
/// Layout: slots `0..<used` of `nodes` are each either live (initialized, on the list, in `index`) or
/// free (uninitialized, on `freeSlots`); slots from `used` to `capacity` are uninitialized. Keeping free
/// slots uninitialized, instead of storing optionals, keeps a node at the size of its fields and lets a
/// removed value be released at once.
@usableFromInline
final class LRUTable<Key: Hashable, Value> {
    /// One entry and its list links.
    @usableFromInline
    struct Node {
        @usableFromInline var key: Key
        @usableFromInline var value: Value
        /// Seconds since the reference date (2001-01-01 UTC); `.infinity` for an entry that never expires.
        @usableFromInline var expiresAt: Double
        @usableFromInline var cost: Int
        /// The next more recently used slot, or `LRUTable.none`.
        @usableFromInline var prev: Int32
        /// The next less recently used slot, or `LRUTable.none`.
        @usableFromInline var next: Int32

        @inlinable
        init(key: Key, value: Value, expiresAt: Double, cost: Int, prev: Int32, next: Int32) {
            self.key = key
            self.value = value
            self.expiresAt = expiresAt
            self.cost = cost
            self.prev = prev
            self.next = next
        }
    }

    /// The outcome of a read.
    @usableFromInline
    enum Lookup {
        /// A live entry; its recency was refreshed.
        case hit(Value, expiresAt: Double, cost: Int)
        /// No entry for the key.
        case miss
        /// The entry can expire, so the read needs a clock reading (nothing was counted or changed).
        case needsClock
        /// The entry had expired and was dropped (counted as a miss and an expiration); the value is
        /// handed back only so that it is released outside the lock.
        case expired(Value)
    }

    /// Values that left the table during one operation, released by the caller after unlocking.
    @usableFromInline
    struct Released {
        @usableFromInline var first: Value?
        @usableFromInline var rest: [Value] = []

        @inlinable init() {}

        @inlinable mutating func append(_ value: Value) {
            if first == nil { first = value } else { rest.append(value) }
        }
    }

    @inlinable static var none: Int32 { -1 }
    /// The most slots a table can address with `Int32` links.
    static var maximumSlots: Int { Int(Int32.max) }

    /// The most entries this table keeps (its share of the cache's count limit).
    @usableFromInline let countLimit: Int
    /// The highest total cost this table keeps (its share of the cache's cost limit).
    @usableFromInline let costLimit: Int

    // `@exclusivity(unchecked)`: a class's stored properties otherwise get a dynamic exclusivity check
    // (a runtime call and a thread-local lookup) on every access, about a tenth of a cache hit. Skipping
    // it is safe: every access runs under the shard's lock, and no method overlaps two accesses to one
    // property (the `claim` call's `inout` access to `index` touches nothing else).
    @usableFromInline @exclusivity(unchecked) var index: [Key: Int32] = [:]
    @usableFromInline @exclusivity(unchecked) var nodes: UnsafeMutablePointer<Node>
    @usableFromInline @exclusivity(unchecked) var capacity: Int
    @usableFromInline @exclusivity(unchecked) var used = 0
    @usableFromInline @exclusivity(unchecked) var freeSlots: [Int32] = []
    /// The most recently used slot.
    @usableFromInline @exclusivity(unchecked) var head = LRUTable.none
    /// The least recently used slot, the next to be evicted.
    @usableFromInline @exclusivity(unchecked) var tail = LRUTable.none
    @usableFromInline @exclusivity(unchecked) var totalCost = 0
    /// Counters; `count` and `totalCost` are filled in by ``statistics``.
    @usableFromInline @exclusivity(unchecked) var counters = CacheStatistics()

    /// Creates an empty table.
    ///
    /// - Parameters:
    ///   - countLimit: The most entries to keep, `nil` for no limit; never negative.
    ///   - costLimit: The highest total cost to keep, `nil` for no limit; never negative.
    ///   - counters: Counters carried over from a table this one replaces.
    init(countLimit: Int?, costLimit: Int?, counters: CacheStatistics = CacheStatistics()) {
        // One slot more than the count limit: an insertion links the new node before evicting.
        self.countLimit = min(countLimit ?? Int.max, Self.maximumSlots - 1)
        self.costLimit = costLimit ?? Int.max
        self.counters = counters
        self.counters.count = 0
        self.counters.totalCost = 0
        capacity = min(8, self.countLimit + 1)
        nodes = .allocate(capacity: capacity)
    }

    deinit {
        var slot = head
        while slot != Self.none {
            let next = nodes[Int(slot)].next
            (nodes + Int(slot)).deinitialize(count: 1)
            slot = next
        }
        nodes.deallocate()
    }

    var count: Int { index.count }

    /// A snapshot of the counters with the current count and total cost.
    var statistics: CacheStatistics {
        var snapshot = counters
        snapshot.count = index.count
        snapshot.totalCost = totalCost
        return snapshot
    }

    // MARK: - Reads

    /// Reads `key` without a clock reading: answers only when the entry is absent or never expires.
    ///
    /// A hit refreshes recency and counts a hit, a miss counts a miss; ``Lookup/needsClock`` changes
    /// nothing, and the caller retries with ``read(_:now:)``.
    @inlinable
    func readWithoutClock(_ key: Key) -> Lookup {
        guard let slot = index[key] else {
            counters.misses += 1
            return .miss
        }
        let node = nodes + Int(slot)
        guard node.pointee.expiresAt == .infinity else { return .needsClock }
        moveToFront(slot)
        counters.hits += 1
        return .hit(node.pointee.value, expiresAt: .infinity, cost: node.pointee.cost)
    }

    /// Reads `key` at `now` (seconds since the reference date), dropping it if it has expired.
    @inlinable
    func read(_ key: Key, now: Double) -> Lookup {
        guard let slot = index[key] else {
            counters.misses += 1
            return .miss
        }
        let node = nodes + Int(slot)
        if node.pointee.expiresAt <= now {
            counters.misses += 1
            counters.expirations += 1
            return .expired(unlinkAndFree(slot, removingFromIndex: true).value)
        }
        moveToFront(slot)
        counters.hits += 1
        return .hit(node.pointee.value, expiresAt: node.pointee.expiresAt, cost: node.pointee.cost)
    }

    // MARK: - Writes

    /// Stores `value` under `key` as the most recently used entry, then evicts from the least recently
    /// used end until the table is within its limits.
    ///
    /// An entry that cannot be kept — the table keeps nothing, its cost alone exceeds the cost limit, or
    /// it has already expired at `now` — is not stored, evicts nothing, and removes the earlier entry for
    /// `key`, because the caller replaced it.
    ///
    /// - Parameters:
    ///   - cost: The entry's cost, already made non-negative.
    ///   - expiresAt: Seconds since the reference date, `.infinity` for never; NaN counts as expired.
    ///   - now: The clock reading for an entry that can expire, `-.infinity` when none was taken.
    /// - Returns: The values that left the table (the replaced one and any evicted ones).
    @inlinable
    func store(_ value: Value, forKey key: Key, cost: Int, expiresAt: Double, now: Double) -> Released {
        var released = Released()
        // `!(expiresAt > now)` rather than `expiresAt <= now`: a NaN expiry counts as already expired,
        // not as one that never comes.
        if countLimit == 0 || costLimit == 0 || cost > costLimit || !(expiresAt > now) {
            if let slot = index.removeValue(forKey: key) {
                released.first = unlinkAndFree(slot, removingFromIndex: false).value
            }
            return released
        }
        // Keep the running total representable: costs near `Int.max` (with no cost limit, or a limit
        // above `Int.max / 2`) would otherwise overflow it. Evicting first makes room the usual way.
        while Int.max - totalCost < cost && tail != Self.none {
            released.append(evictTail())
        }
        let candidate = freeSlots.last ?? Int32(truncatingIfNeeded: used)
        // One hash lookup finds the key or claims `candidate` for it.
        let existing = Self.claim(&index[key, default: Self.none], for: candidate)
        if existing != Self.none {
            let node = nodes + Int(existing)
            released.first = node.pointee.value
            node.pointee.value = value
            totalCost += cost - node.pointee.cost
            node.pointee.cost = cost
            node.pointee.expiresAt = expiresAt
            moveToFront(existing)
        } else {
            let slot = allocateSlot()
            (nodes + Int(slot)).initialize(
                to: Node(key: key, value: value, expiresAt: expiresAt, cost: cost, prev: Self.none, next: head))
            linkAtFront(slot)
            totalCost += cost
        }
        counters.insertions += 1
        while index.count > countLimit || totalCost > costLimit {
            released.append(evictTail())
        }
        return released
    }

    /// Removes the entry for `key`.
    ///
    /// - Returns: The removed value with its expiry (seconds since the reference date), or `nil`.
    @inlinable
    func remove(_ key: Key) -> (value: Value, expiresAt: Double)? {
        guard let slot = index.removeValue(forKey: key) else { return nil }
        let node = unlinkAndFree(slot, removingFromIndex: false)
        return (node.value, node.expiresAt)
    }

    /// Removes every entry whose expiry is at or before `now`, counting each as an expiration.
    ///
    /// - Complexity: O(*n*) in the number of entries held.
    func removeExpired(now: Double, into released: inout Released) -> Int {
        var removed = 0
        var slot = head
        while slot != Self.none {
            let next = nodes[Int(slot)].next
            if nodes[Int(slot)].expiresAt <= now {
                released.append(unlinkAndFree(slot, removingFromIndex: true).value)
                removed += 1
            }
            slot = next
        }
        counters.expirations += removed
        return removed
    }

    /// Evicts least recently used entries until at most `count` remain.
    ///
    /// - Complexity: O(*k*) in the number of entries evicted.
    func trim(toCount count: Int, into released: inout Released) {
        while index.count > max(count, 0) {
            released.append(evictTail())
        }
    }

    /// Evicts least recently used entries until the total cost is at most `cost`.
    ///
    /// - Complexity: O(*k*) in the number of entries evicted.
    func trim(toCost cost: Int, into released: inout Released) {
        while totalCost > max(cost, 0) && tail != Self.none {
            released.append(evictTail())
        }
    }

    // MARK: - List and slot plumbing

    /// Sets `slot` to `candidate` when the key was just inserted (it reads `none`).
    ///
    /// - Returns: The key's existing slot, or `none` when `candidate` was claimed.
    @inlinable
    static func claim(_ slot: inout Int32, for candidate: Int32) -> Int32 {
        if slot == none {
            slot = candidate
            return none
        }
        return slot
    }

    /// Takes the slot `store` announced as its candidate: the last free slot, else the next unused one.
    @inlinable
    func allocateSlot() -> Int32 {
        if let slot = freeSlots.popLast() { return slot }
        if used == capacity { grow() }
        used += 1
        return Int32(truncatingIfNeeded: used - 1)
    }

    /// Doubles the node buffer. Runs only when no slot is free, so every slot below `used` is live.
    @usableFromInline
    func grow() {
        let newCapacity = min(max(capacity * 2, 8), Self.maximumSlots)
        let newNodes = UnsafeMutablePointer<Node>.allocate(capacity: newCapacity)
        newNodes.moveInitialize(from: nodes, count: used)
        nodes.deallocate()
        nodes = newNodes
        capacity = newCapacity
    }

    /// Removes the least recently used entry, counting an eviction.
    @inlinable
    func evictTail() -> Value {
        counters.evictions += 1
        return unlinkAndFree(tail, removingFromIndex: true).value
    }

    /// Unlinks `slot`, moves its node out, and puts the slot on the free list.
    @inlinable
    func unlinkAndFree(_ slot: Int32, removingFromIndex: Bool) -> Node {
        unlink(slot)
        let node = (nodes + Int(slot)).move()
        if removingFromIndex { index.removeValue(forKey: node.key) }
        totalCost -= node.cost
        freeSlots.append(slot)
        if index.isEmpty { releaseSpareStorage() }
        return node
    }

    /// Returns the slot buffer to its initial size once the table is empty, so a trim to zero or an
    /// emptied shard gives its memory back.
    @usableFromInline
    func releaseSpareStorage() {
        freeSlots = []
        used = 0
        guard capacity > 8 else { return }
        nodes.deallocate()
        capacity = min(8, countLimit + 1)
        nodes = .allocate(capacity: capacity)
        index = [:]
    }

    @inlinable
    func moveToFront(_ slot: Int32) {
        guard slot != head else { return }
        unlink(slot)
        let node = nodes + Int(slot)
        node.pointee.prev = Self.none
        node.pointee.next = head
        linkAtFront(slot)
    }

    /// Makes `slot`, whose `next` already points at the old head, the head.
    @inlinable
    func linkAtFront(_ slot: Int32) {
        if head != Self.none { nodes[Int(head)].prev = slot } else { tail = slot }
        head = slot
    }

    @inlinable
    func unlink(_ slot: Int32) {
        // Read the two links only: copying the whole node would retain its key and value.
        let prev = nodes[Int(slot)].prev
        let next = nodes[Int(slot)].next
        if prev != Self.none { nodes[Int(prev)].next = next } else { head = next }
        if next != Self.none { nodes[Int(next)].prev = prev } else { tail = prev }
    }
}

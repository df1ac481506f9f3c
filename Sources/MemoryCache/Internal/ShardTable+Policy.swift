import CacheCore

/// The eviction policy a ``ShardTable`` runs, with the way it keeps recency: one value per table, and one
/// `switch` over it in each of the table's policy hooks (below), so that the table's own code — reads,
/// writes, removals, trims, slots — names no policy.
///
/// Why an enum with no payload and not `case windowTinyLFU(WindowTinyLFU)`: a payload cannot be mutated in
/// place through a `switch` (binding it copies it, and the policy's queues are arrays, so every hit would
/// copy them), and a table generic over a policy type would make ``MemoryCache`` generic over it too or
/// reach its shards through an existential. The policies' state lives beside the tag instead: LRU's queue
/// in the table (`queue`, `queueStart`), W-TinyLFU's in `frequencyPolicy`. Measured against the four
/// booleans this replaces, the hit, insertion and two-thread rows did not move (`Docs/Performance.md`).
@usableFromInline
enum ShardPolicy: Sendable {
    /// LRU in exact order: every use queues a record (one-shard caches).
    case exactLRU
    /// LRU approximated by second chance (CLOCK, Corbató 1968): a hit sets a referenced bit once, and
    /// eviction re-queues a referenced entry instead of evicting it (the shards of a sharded cache).
    case secondChanceLRU
    /// W-TinyLFU with exact recency in each region (one-shard caches).
    case windowTinyLFU
    /// W-TinyLFU whose hits on window and protected entries set a referenced bit, as `secondChanceLRU`
    /// does (the shards of a sharded cache).
    case secondChanceWindowTinyLFU

    /// The table policy for `policy`, in a shard of a sharded cache when `sharded`.
    init(_ policy: EvictionPolicy, sharded: Bool) {
        switch policy.kind {
        case .leastRecentlyUsed: self = sharded ? .secondChanceLRU : .exactLRU
        case .windowTinyLFU: self = sharded ? .secondChanceWindowTinyLFU : .windowTinyLFU
        }
    }

    /// The public policy this table policy runs.
    var evictionPolicy: EvictionPolicy {
        switch self {
        case .exactLRU, .secondChanceLRU: .leastRecentlyUsed
        case .windowTinyLFU, .secondChanceWindowTinyLFU: .windowTinyLFU
        }
    }

    /// Whether this is the policy of a shard of a sharded cache (second chance instead of exact recency).
    var isSharded: Bool {
        switch self {
        case .exactLRU, .windowTinyLFU: false
        case .secondChanceLRU, .secondChanceWindowTinyLFU: true
        }
    }

    /// Whether the policy keeps per-slot key hashes and a frequency sketch (W-TinyLFU).
    @inlinable
    var admitsByFrequency: Bool {
        switch self {
        case .exactLRU, .secondChanceLRU: false
        case .windowTinyLFU, .secondChanceWindowTinyLFU: true
        }
    }
}

// MARK: - The hooks

extension ShardTable {
    /// Hit: counts a hit on live slot `slot` and refreshes its recency as the policy does it.
    ///
    /// An exact LRU table records every use without reading the slot's stamp first: a store the CPU need
    /// not wait for. A second-chance table only sets the slot's referenced bit (see `markReferenced`). A
    /// W-TinyLFU table appends the hit to its hit buffer, which also counts it (see `touchByFrequency`).
    @inlinable
    func countHit(_ slot: Int32) {
        switch policy {
        case .exactLRU:
            record(slot)
            counters.hits += 1
        case .secondChanceLRU:
            counters.hits += 1
            markReferenced(slot)
        case .windowTinyLFU, .secondChanceWindowTinyLFU:
            touchByFrequency(slot)
        }
    }

    /// Admit: places newly stored slot `slot` (of cost `cost`, already added to `totalCost`; `replacing`
    /// when it replaced an entry of the same key), then evicts until the table is within its limits. LRU admits every entry and never evicts the new one;
    /// W-TinyLFU runs its window and admission duels (`insertByFrequency`).
    @inlinable
    func admit(_ slot: Int32, cost: Int, replacing: Bool, into released: inout Released) {
        switch policy {
        case .exactLRU, .secondChanceLRU:
            admitByRecency(slot, into: &released)
        case .windowTinyLFU, .secondChanceWindowTinyLFU:
            let hash = UInt32(truncatingIfNeeded: keys[Int(slot)].hashValue)
            insertByFrequency(slot, hash: hash, cost: cost, replacing: replacing, into: &released)
        }
    }

    /// Victim: the live slot the policy evicts next, other than `spared` (the entry an insertion just
    /// stored, or `none`); `nil` when no other slot is live.
    @inlinable
    func victim(sparing spared: Int32 = none) -> Int32? {
        switch policy {
        case .exactLRU, .secondChanceLRU: leastRecentlyUsedSlot(sparing: spared)
        case .windowTinyLFU, .secondChanceWindowTinyLFU: frequencyVictim(sparing: spared)
        }
    }

    /// Remove: tells the policy that live slot `slot` is leaving the table (`evicted` when the policy's
    /// own choice or a limit sent it, rather than a removal, an expiry or a replacement). Runs before the
    /// table clears the slot's stamp. LRU needs nothing: clearing the stamp makes its records stale.
    @inlinable
    func policyRemove(_ slot: Int32, evicted: Bool) {
        switch policy {
        case .exactLRU, .secondChanceLRU: break
        case .windowTinyLFU, .secondChanceWindowTinyLFU: removeByFrequency(slot, evicted: evicted)
        }
    }

    /// Applies any hits the policy buffered. Every operation other than a hit calls this first, so that
    /// it sees the policy as if each hit had been applied at once, and so that no buffered slot is freed.
    @inlinable
    func settleBufferedHits() {
        switch policy {
        case .exactLRU, .secondChanceLRU: break
        case .windowTinyLFU, .secondChanceWindowTinyLFU:
            if frequencyPolicy.bufferedHitCount != 0 { applyBufferedHits() }
        }
    }

    /// Hits the policy has buffered and not yet added to `counters`.
    var pendingHitCount: Int {
        switch policy {
        case .exactLRU, .secondChanceLRU: 0
        case .windowTinyLFU, .secondChanceWindowTinyLFU: frequencyPolicy.bufferedHitCount
        }
    }

    /// Reset: forgets every queued record once the table is empty (the stamps were all cleared).
    @usableFromInline
    func resetPolicy() {
        queue = []
        queueStart = 0
        switch policy {
        case .exactLRU, .secondChanceLRU: break
        case .windowTinyLFU, .secondChanceWindowTinyLFU:
            frequencyPolicy.window.removeAll()
            frequencyPolicy.probation.removeAll()
            frequencyPolicy.protected.removeAll()
        }
    }

    /// Moves the policy's per-slot storage to `newCapacity` slots, keeping slots `0..<used`.
    @usableFromInline
    func resizePolicySlots(toCapacity newCapacity: Int) {
        switch policy {
        case .exactLRU, .secondChanceLRU: break
        case .windowTinyLFU, .secondChanceWindowTinyLFU:
            let newHashes = UnsafeMutablePointer<UInt32>.allocate(capacity: newCapacity)
            newHashes.moveInitialize(from: frequencyPolicy.hashes, count: used)
            frequencyPolicy.hashes.deallocate()
            frequencyPolicy.hashes = newHashes
        }
    }

    /// Invariants, first part: the hits the policy buffered, checked before they are applied.
    func pendingHitViolation() -> String? {
        switch policy {
        case .exactLRU, .secondChanceLRU: nil
        case .windowTinyLFU, .secondChanceWindowTinyLFU: bufferedHitViolation()
        }
    }

    /// Invariants: the policy's own structure, checked after the table's (see `invariantViolation()`).
    func policyInvariantViolation() -> String? {
        switch policy {
        case .exactLRU, .secondChanceLRU: recencyQueueViolation()
        case .windowTinyLFU, .secondChanceWindowTinyLFU: frequencyPolicyViolation()
        }
    }

    /// Removes live slot `slot`'s entry as the policy's choice, counting an eviction.
    ///
    /// - Returns: Its value, to be released outside the lock.
    @inlinable
    func evict(_ slot: Int32) -> Value? {
        counters.evictions += 1
        // Copy the key out before the slot is freed: the index still needs it to find the entry.
        let key = keys[Int(slot)]
        let entry = index.removeValue(forKey: key)
        freeSlot(slot, evicted: true)
        return entry?.value
    }

    /// Evicts the policy's next victim other than `spared`, counting an eviction.
    ///
    /// - Returns: Its value, or `nil` when no entry but `spared` is left.
    @inlinable
    func evictVictim(sparing spared: Int32 = none) -> Value? {
        guard let slot = victim(sparing: spared) else { return nil }
        return evict(slot)
    }
}

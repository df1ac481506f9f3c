import CacheCore

extension ShardTable {
    // MARK: - Slots

    /// Takes a slot for a new entry: the last free slot, else the next unused one.
    @inlinable
    func allocateSlot() -> Int32 {
        if let slot = freeSlots.popLast() { return slot }
        if used == capacity { grow() }
        used += 1
        return Int32(truncatingIfNeeded: used - 1)
    }

    /// Doubles the slot buffers. Runs only when no slot is free, so every slot below `used` is live.
    @usableFromInline
    func grow() {
        let newCapacity = min(max(capacity * 2, 8), Self.maximumSlots)
        let newStamps = UnsafeMutablePointer<UInt32>.allocate(capacity: newCapacity)
        let newKeys = UnsafeMutablePointer<Key>.allocate(capacity: newCapacity)
        let newCosts = UnsafeMutablePointer<Int>.allocate(capacity: newCapacity)
        let newExpiries = UnsafeMutablePointer<Double>.allocate(capacity: newCapacity)
        newStamps.moveInitialize(from: stamps, count: used)
        newKeys.moveInitialize(from: keys, count: used)
        newCosts.moveInitialize(from: costs, count: used)
        newExpiries.moveInitialize(from: expiries, count: used)
        if let tagChecks {
            let newTagChecks = UnsafeMutablePointer<UInt64>.allocate(capacity: newCapacity)
            newTagChecks.moveInitialize(from: tagChecks, count: used)
            tagChecks.deallocate()
            self.tagChecks = newTagChecks
        }
        resizePolicySlots(toCapacity: newCapacity)
        stamps.deallocate()
        keys.deallocate()
        costs.deallocate()
        expiries.deallocate()
        stamps = newStamps
        keys = newKeys
        costs = newCosts
        expiries = newExpiries
        capacity = newCapacity
    }

    /// Drops a slot whose entry has left the index: tells the policy (`evicted` when it was the policy's
    /// choice), then drops its key, its cost and its stamp (which makes its records stale), and puts it on
    /// the free list.
    @inlinable
    func freeSlot(_ slot: Int32, evicted: Bool = false) {
        policyRemove(slot, evicted: evicted)
        stamps[Int(slot)] = 0
        if !staleUntils.isEmpty { staleUntils[slot] = nil }
        if !tagStamps.isEmpty { tagStamps[slot] = nil }
        (keys + Int(slot)).deinitialize(count: 1)
        totalCost -= costs[Int(slot)]
        freeSlots.append(slot)
        if index.isEmpty { releaseSpareStorage() }
    }

    /// Returns the slot buffers to their initial size once the table is empty, so a trim to zero or an
    /// emptied shard gives its memory back.
    @usableFromInline
    func releaseSpareStorage() {
        freeSlots = []
        used = 0
        resetPolicy()
        guard capacity > 8 else { return }
        tagChecks?.deallocate()
        tagChecks = nil
        stamps.deallocate()
        keys.deallocate()
        costs.deallocate()
        expiries.deallocate()
        capacity = min(8, countLimit + 1)
        stamps = .allocate(capacity: capacity)
        keys = .allocate(capacity: capacity)
        costs = .allocate(capacity: capacity)
        expiries = .allocate(capacity: capacity)
        resizePolicySlots(toCapacity: capacity)
        index = [:]
    }
}

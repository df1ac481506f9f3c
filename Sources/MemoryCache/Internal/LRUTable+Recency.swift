import CacheCore

extension LRUTable {
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
        if admitsByFrequency {
            let newHashes = UnsafeMutablePointer<UInt32>.allocate(capacity: newCapacity)
            newHashes.moveInitialize(from: frequencyPolicy.hashes, count: used)
            frequencyPolicy.hashes.deallocate()
            frequencyPolicy.hashes = newHashes
        }
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

    /// Removes the least recently used entry other than the one in slot `spared`, counting an eviction.
    ///
    /// - Parameter spared: A slot never to evict (the entry an insertion just stored), or `none`.
    /// - Returns: Its value, to be released outside the lock, or `nil` when no entry but `spared` is left.
    ///
    /// A W-TinyLFU table evicts its policy's next victim instead (see `evictVictim`).
    @inlinable
    func evictLeastRecentlyUsed(sparing spared: Int32 = none) -> Value? {
        if admitsByFrequency { return evictVictim(sparing: spared) }
        guard let slot = leastRecentlyUsedSlot(sparing: spared) else { return nil }
        counters.evictions += 1
        // Copy the key out before the slot is freed: the index still needs it to find the entry.
        let key = keys[Int(slot)]
        let entry = index.removeValue(forKey: key)
        freeSlot(slot)
        return entry?.value
    }

    /// Drops a slot whose entry has left the index: its key, its cost and its stamp (which makes its
    /// records stale), and puts it on the free list.
    @inlinable
    func freeSlot(_ slot: Int32) {
        if admitsByFrequency {
            frequencyPolicy.adjust(region(of: slot), count: -1, cost: -regionCost(of: slot))
        }
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
        queue = []
        queueStart = 0
        if admitsByFrequency {
            frequencyPolicy.window.removeAll()
            frequencyPolicy.probation.removeAll()
            frequencyPolicy.protected.removeAll()
        }
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
        if admitsByFrequency {
            frequencyPolicy.hashes.deallocate()
            frequencyPolicy.hashes = .allocate(capacity: capacity)
        }
        index = [:]
    }

    // MARK: - Recency

    /// Counts a hit on live slot `slot` and records the use, making the entry the most recently used.
    ///
    /// An exact table records every use without reading the slot's stamp first: a store the CPU need
    /// not wait for, where a read of a line that missed the cache would stall the hit. (A repeated use
    /// of the newest entry then leaves a stale record behind, which compaction drops.)
    ///
    /// A table that approximates recency (a shard of a sharded cache) gives entries a second chance
    /// instead (the CLOCK policy, Corbató 1968): a hit only sets the slot's referenced bit, once, and
    /// eviction moves a referenced entry to the back of the queue rather than evicting it. A hit then
    /// writes no line that every use of the shard shares (the tick, the queue's tail), which is what
    /// keeps two cores from trading those lines on every read.
    ///
    /// A W-TinyLFU table appends the hit to its hit buffer, which also counts it (see
    /// `touchByFrequency`): the hit writes that one line and not the counters' line as well.
    @inlinable
    func countHit(_ slot: Int32) {
        // One test on the exact LRU path, the common one.
        if isExactLRU {
            record(slot)
            counters.hits += 1
            return
        }
        if admitsByFrequency {
            touchByFrequency(slot)
            return
        }
        counters.hits += 1
        if approximatesRecency {
            let stamp = stamps[Int(slot)]
            if stamp & Self.referencedBit == 0 { stamps[Int(slot)] = stamp | Self.referencedBit }
            return
        }
        record(slot)
    }

    /// The stamp bit that marks a slot of an approximate table as used since it was queued.
    @inlinable static var referencedBit: UInt32 { 1 << 31 }

    /// Whether `record` is the slot's current record: its stamp matches the slot's, the referenced bit
    /// aside.
    @inlinable
    func isCurrent(_ record: RecencyRecord) -> Bool {
        stamps[Int(record.slot)] & ~(approximatesRecency ? Self.referencedBit : 0) == record.stamp
    }

    /// The number of live slots, `index.count`, read without touching the index: unspecialized code
    /// would look up the index's generic type metadata for that.
    @inlinable
    var liveCount: Int { used - freeSlots.count }

    /// Stamps `slot` with the next tick and appends its record, compacting the queue when it has grown
    /// to twice the live entries (plus slack, so small tables do not compact on every use).
    @inlinable
    func record(_ slot: Int32) {
        tick &+= 1
        // An approximate table keeps the top bit for `referencedBit`, so its ticks wrap at 2^31.
        if tick == 0 || (approximatesRecency && tick == Self.referencedBit) { tick = 1 }
        stamps[Int(slot)] = tick
        queue.append(RecencyRecord(slot: slot, stamp: tick))
        // The bound on the slack keeps a stale record's life far below 2^32 ticks, so a wrapped tick
        // never makes one look current again.
        if queue.count - queueStart > liveCount + min(liveCount, 1 << 24) + 16 { compactQueue() }
    }

    /// Drops spent and stale records, keeping the live ones in order.
    ///
    /// - Complexity: O(*q*) in the records held; runs once per at least *n* + 16 uses, so O(1) amortized.
    @usableFromInline
    func compactQueue() {
        var kept = 0
        queue.withUnsafeMutableBufferPointer { records in
            for position in queueStart..<records.count {
                let record = records[position]
                if isCurrent(record) {
                    records[kept] = record
                    kept += 1
                }
            }
        }
        queue.removeLast(queue.count - kept)
        queueStart = 0
    }

    /// The least recently used live slot other than `spared` (spending the stale records in front of it),
    /// or `nil` when no other slot is live. In an approximate table a referenced slot met on the way loses
    /// its bit and goes to the back of the queue.
    ///
    /// `spared` goes to the back too when it is met. An insertion spares its own entry: the second
    /// chances it hands out queue read entries behind the new one, which would otherwise come up first
    /// and be evicted by its own insertion (every entry read since the last pass is one such case).
    /// Once re-queued it can come up again only after every other slot, each of which is then unread
    /// (its bit was cleared when it was re-queued) and evicted first.
    ///
    /// - Complexity: O(1) amortized: each record is spent once, and each hit sets at most one bit, which
    ///   at most one second chance clears; `spared` is re-queued at most once per call.
    @inlinable
    func leastRecentlyUsedSlot(sparing spared: Int32 = none) -> Int32? {
        var sparedOnce = false
        while queueStart < queue.count {
            let record = queue[queueStart]
            queueStart += 1
            guard isCurrent(record) else { continue }
            if record.slot == spared {
                if sparedOnce {
                    queueStart -= 1
                    return nil
                }
                sparedOnce = true
            } else if stamps[Int(record.slot)] == record.stamp {
                queueStart -= 1
                return record.slot
            }
            self.record(record.slot)
        }
        return nil
    }
}

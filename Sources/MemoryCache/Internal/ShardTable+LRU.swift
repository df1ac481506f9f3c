import CacheCore

extension ShardTable {
    // MARK: - Recency

    /// Admits newly stored slot `slot` as the most recently used entry, then evicts least recently used
    /// entries until the table is within its limits.
    ///
    /// The new entry fits on its own (the table checked that), so sparing it always leaves something to
    /// evict while the table is over a limit; the `break` only guards against looping forever.
    @inlinable
    func admitByRecency(_ slot: Int32, into released: inout Released) {
        record(slot)
        while index.count > countLimit || totalCost > costLimit {
            guard let evicted = evictVictim(sparing: slot) else { break }
            released.append(evicted)
        }
    }

    /// Marks live slot `slot` as used since it was queued (second chance): sets the slot's referenced bit,
    /// once, so that eviction moves the entry to the back of the queue rather than evicting it. A hit then
    /// writes no line that every use of the shard shares (the tick, the queue's tail), which is what keeps
    /// two cores from trading those lines on every read.
    @inlinable
    func markReferenced(_ slot: Int32) {
        let stamp = stamps[Int(slot)]
        if stamp & Self.referencedBit == 0 { stamps[Int(slot)] = stamp | Self.referencedBit }
    }

    /// The stamp bit that marks a slot of an approximate table as used since it was queued.
    @inlinable static var referencedBit: UInt32 { 1 << 31 }

    /// Whether `record` is the slot's current record: its stamp matches the slot's, the referenced bit
    /// aside (an exact table never sets it, and its ticks, like every LRU table's, stay below it).
    @inlinable
    func isCurrent(_ record: RecencyRecord) -> Bool {
        stamps[Int(record.slot)] & ~Self.referencedBit == record.stamp
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
        // The top bit is `referencedBit`, so ticks stay below 2^31.
        if tick >= Self.referencedBit { renumberQueue() }
        stamps[Int(slot)] = tick
        queue.append(RecencyRecord(slot: slot, stamp: tick))
        // Spent records count too: evictions spend the records at the front, so at the limit the
        // unspent ones stay about as many as the entries while the spent ones pile up.
        if queue.count > liveCount + min(liveCount, 1 << 24) + 16 { compactQueue() }
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

    /// Restarts the ticks when they reach 2^31: drops every stale record and numbers the current ones
    /// 1, 2, … in queue order, in the records and their slots' stamps (keeping the referenced bit), and
    /// sets the tick after the last.
    ///
    /// Simply wrapping to 1 would let a record that stayed current through the wrap (an entry left
    /// unused for 2^31 uses of others) become current again once its slot, used in between, is stamped
    /// with the same tick: two current records for one slot. After the restart every record's tick is
    /// below the table's until the next restart, and the ticks given never exceed the entries held (below
    /// 2^30), so a restart comes at most once per 2^30 ticks (0 stays a free slot's stamp).
    ///
    /// - Complexity: O(*q*) in the records held.
    @usableFromInline @inline(never)
    func renumberQueue() {
        compactQueue()
        var last: UInt32 = 0
        for position in queue.indices {
            last += 1
            let slot = Int(queue[position].slot)
            queue[position].stamp = last
            stamps[slot] = stamps[slot] & Self.referencedBit | last
        }
        tick = last + 1
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

extension LRUTable {
    // MARK: - Hits

    /// Counts a hit on live slot `slot` in the sketch and refreshes its recency within its region; an
    /// entry read while on probation moves to the protected segment.
    @inlinable
    func touchByFrequency(_ slot: Int32) {
        let tag = frequencyPolicy.tags[Int(slot)]
        frequencyPolicy.sketch.increment(tag >> 2)
        switch tag & PolicyRegion.mask {
        case PolicyRegion.window: record(slot, in: PolicyRegion.window)
        case PolicyRegion.protected: record(slot, in: PolicyRegion.protected)
        default: promote(slot)
        }
    }

    /// Moves a probation entry that was read to the protected segment, demoting the protected segment's
    /// least recently used entries to probation while it is over its budget.
    @usableFromInline
    func promote(_ slot: Int32) {
        move(slot, to: PolicyRegion.protected)
        while frequencyPolicy.protectedIsOver {
            guard let demoted = frequencyPolicy.protected.popOldest(stamps: stamps) else { break }
            move(demoted, to: PolicyRegion.probation)
        }
    }

    // MARK: - Insertion and admission

    /// Places newly stored slot `slot` at the window's most recent end, lets a ghost hit resize the window,
    /// then restores the limits: window entries pushed out become candidates, each of which enters the main region only by beating the
    /// victims it would push out (TinyLFU admission); what is still over a limit after that is evicted.
    ///
    /// - Parameters:
    ///   - hash: The key's hash value, kept in the slot's tag for the sketch.
    ///   - cost: The entry's cost, already added to `totalCost`.
    @usableFromInline
    func insertByFrequency(_ slot: Int32, hash: Int, cost: Int, into released: inout Released) {
        // 30 bits of the (seeded, well mixed) hash; the low 2 bits of the tag hold the region.
        let tag = UInt32(truncatingIfNeeded: hash) & ~PolicyRegion.mask
        frequencyPolicy.tags[Int(slot)] = tag | PolicyRegion.candidate
        frequencyPolicy.adjust(PolicyRegion.candidate, count: 1, cost: cost)
        move(slot, to: PolicyRegion.window)
        // The sketch grows with the entries held, up to the count limit (rounded up to a power of two).
        let sketchCapacity = frequencyPolicy.sketch.capacity
        if liveCount > sketchCapacity && sketchCapacity < min(countLimit, FrequencySketch.maximumCapacity) {
            frequencyPolicy.resize(toCapacity: min(2 * sketchCapacity, countLimit))
        }
        if frequencyPolicy.adapt(toInsertionOf: tag >> 2, entries: liveCount) { rebalanceRegions() }
        frequencyPolicy.sketch.increment(tag >> 2)
        var candidates = frequencyPolicy.candidates
        frequencyPolicy.candidates = []
        candidates.removeAll(keepingCapacity: true)
        while frequencyPolicy.windowIsOver {
            guard let candidate = frequencyPolicy.window.popOldest(stamps: stamps) else { break }
            setRegion(of: candidate, to: PolicyRegion.candidate)
            candidates.append(candidate)
        }
        var next = 0
        while liveCount > countLimit || totalCost > costLimit {
            if next < candidates.count {
                let candidate = candidates[next]
                if let victim = mainVictim(), admits(candidate, over: victim) {
                    released.append(evict(victim))
                } else {
                    released.append(evict(candidate))
                    next += 1
                }
            } else {
                guard let evicted = evictVictim(sparing: slot) else { break }
                released.append(evicted)
            }
        }
        for candidate in candidates[next...] {
            move(candidate, to: PolicyRegion.probation)
        }
        frequencyPolicy.candidates = candidates
    }

    /// Whether `candidate` should take `victim`'s place: only if the sketch estimates it was used more
    /// often. A tie keeps the victim, which the TinyLFU paper found better for skewed workloads.
    @inlinable
    func admits(_ candidate: Int32, over victim: Int32) -> Bool {
        let sketch = frequencyPolicy.sketch
        return sketch.frequency(frequencyPolicy.tags[Int(candidate)] >> 2)
            > sketch.frequency(frequencyPolicy.tags[Int(victim)] >> 2)
    }

    /// The main region's next victim: the least recently used probation entry, else the least recently
    /// used protected one.
    @usableFromInline
    func mainVictim() -> Int32? {
        if let slot = frequencyPolicy.probation.oldest(stamps: stamps) { return slot }
        return frequencyPolicy.protected.oldest(stamps: stamps)
    }

    /// Evicts the policy's next victim other than `spared`: from the main region first, then the window's
    /// least recently used entry. Used when no candidate is left to duel, and by trimming.
    ///
    /// - Returns: The evicted value, or `nil` when no entry but `spared` is left.
    @usableFromInline
    func evictVictim(sparing spared: Int32 = none) -> Value? {
        if let slot = mainVictim() { return evict(slot) }
        guard let slot = frequencyPolicy.window.oldest(stamps: stamps), slot != spared else { return nil }
        return evict(slot)
    }

    /// Removes live slot `slot`'s entry, counting an eviction, and remembers its key among the ghosts of
    /// its region.
    @usableFromInline
    func evict(_ slot: Int32) -> Value? {
        counters.evictions += 1
        let tag = frequencyPolicy.tags[Int(slot)]
        switch tag & PolicyRegion.mask {
        case PolicyRegion.probation, PolicyRegion.protected: frequencyPolicy.mainGhosts.insert(tag >> 2)
        default: frequencyPolicy.windowGhosts.insert(tag >> 2)
        }
        let key = keys[Int(slot)]
        let entry = index.removeValue(forKey: key)
        freeSlot(slot)
        return entry?.value
    }

    // MARK: - Regions

    /// Moves live slot `slot` to `region`'s most recent end.
    @inlinable
    func move(_ slot: Int32, to region: UInt32) {
        setRegion(of: slot, to: region)
        record(slot, in: region)
    }

    /// Changes the region in slot `slot`'s tag and the regions' sizes, without queueing it.
    @inlinable
    func setRegion(of slot: Int32, to region: UInt32) {
        let tag = frequencyPolicy.tags[Int(slot)]
        let cost = costs[Int(slot)]
        frequencyPolicy.adjust(tag & PolicyRegion.mask, count: -1, cost: -cost)
        frequencyPolicy.adjust(region, count: 1, cost: cost)
        frequencyPolicy.tags[Int(slot)] = (tag & ~PolicyRegion.mask) | region
    }

    /// Stamps slot `slot` with the next tick and appends its record to `region`'s queue, compacting that
    /// queue when it has grown to twice the region's entries (plus slack).
    @inlinable
    func record(_ slot: Int32, in region: UInt32) {
        tick &+= 1
        if tick & Self.fullCompactionPeriod == 0 { compactRegionQueues() }
        if tick == 0 { tick = 1 }
        stamps[Int(slot)] = tick
        let record = RecencyRecord(slot: slot, stamp: tick)
        let live = frequencyPolicy.count(of: region)
        let slack = live + min(live, 1 << 24) + 16
        switch region {
        case PolicyRegion.window:
            frequencyPolicy.window.append(record)
            if frequencyPolicy.window.pendingCount > slack { frequencyPolicy.window.compact(stamps: stamps) }
        case PolicyRegion.probation:
            frequencyPolicy.probation.append(record)
            if frequencyPolicy.probation.pendingCount > slack { frequencyPolicy.probation.compact(stamps: stamps) }
        default:
            frequencyPolicy.protected.append(record)
            if frequencyPolicy.protected.pendingCount > slack { frequencyPolicy.protected.compact(stamps: stamps) }
        }
    }

    /// Every 2^30 ticks all three queues are compacted, so that no stale record lives until its 32-bit
    /// stamp comes round again (a region's queue that receives no records would otherwise keep its
    /// stale ones indefinitely).
    @inlinable static var fullCompactionPeriod: UInt32 { (1 << 30) - 1 }

    @usableFromInline
    func compactRegionQueues() {
        frequencyPolicy.window.compact(stamps: stamps)
        frequencyPolicy.probation.compact(stamps: stamps)
        frequencyPolicy.protected.compact(stamps: stamps)
    }

    /// Brings the regions within budgets a ghost hit just changed: the window's least recently used
    /// entries move to probation, and the protected segment's to probation, while over budget.
    ///
    /// - Complexity: O(1): a ghost hit moves each budget by at most one entry (or that entry's share of the
    ///   cost limit), so each loop moves a few entries at most.
    @usableFromInline
    func rebalanceRegions() {
        while frequencyPolicy.windowIsOver {
            guard let slot = frequencyPolicy.window.popOldest(stamps: stamps) else { break }
            move(slot, to: PolicyRegion.probation)
        }
        while frequencyPolicy.protectedIsOver {
            guard let slot = frequencyPolicy.protected.popOldest(stamps: stamps) else { break }
            move(slot, to: PolicyRegion.probation)
        }
    }
}

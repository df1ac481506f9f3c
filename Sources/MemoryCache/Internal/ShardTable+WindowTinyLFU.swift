import CacheCore

extension ShardTable {
    // MARK: - Hits

    /// Buffers a hit on live slot `slot`, applying the buffer once it is full (see *Hits go through a
    /// buffer* in ``WindowTinyLFU``): the hit itself makes two stores to the buffer's one line.
    @inlinable
    func touchByFrequency(_ slot: Int32) {
        if frequencyPolicy.bufferHit(slot) { applyBufferedHits() }
    }

    /// Applies every buffered hit, oldest first, and empties the buffer.
    ///
    /// The sketch is updated for all of them first, then their recency: the two do not read each other,
    /// so the order within each is all that matters, and fifteen independent sketch updates in a row let
    /// the processor overlap their memory misses. Kept out of line so that the hit path stays short.
    @inlinable @inline(never)
    func applyBufferedHits() {
        let count = frequencyPolicy.bufferedHitCount
        frequencyPolicy.clearHitBuffer()
        counters.hits += count
        let hashes = frequencyPolicy.hashes
        // Read each hit's stamp, hash and sketch block first: independent loads across hits, whose misses
        // overlap (Swift has no prefetch instruction to ask for this). The value is kept so the reads are
        // not optimized away.
        var touched: UInt64 = 0
        for position in 0..<count {
            let slot = Int(frequencyPolicy.bufferedHit(position))
            touched |= frequencyPolicy.sketch.firstWord(ofBlockFor: hashes[slot])
            touched |= UInt64(stamps[slot])
        }
        // And the stamps of the protected segment's oldest records, which the demotions that follow
        // promotions read one by one (skipping stale ones), each otherwise a miss of its own.
        let protected = frequencyPolicy.protected
        for position in protected.start..<min(protected.start + count / 2, protected.records.count) {
            touched |= UInt64(stamps[Int(protected.records[position].slot)])
        }
        frequencyPolicy.touchedSketchWords = touched
        for position in 0..<count {
            let hash = hashes[Int(frequencyPolicy.bufferedHit(position))]
            frequencyPolicy.sketch.increment(hash)
            // Most hits are not sampled, and pay one multiplication and comparison for the check against LRU.
            if frequencyPolicy.miniature.samples(hash) { noteSampledHit(frequencyPolicy.bufferedHit(position)) }
        }
        for position in 0..<count {
            applyHit(frequencyPolicy.bufferedHit(position))
        }
    }

    /// Runs a hit on live slot `slot`, whose key is sampled, through the miniature LRU. Kept out of line, so
    /// that the unsampled hits' loop stays short.
    @usableFromInline @inline(never)
    func noteSampledHit(_ slot: Int32) {
        frequencyPolicy.noteSampledRequest(
            frequencyPolicy.hashes[Int(slot)], cost: regionCost(of: slot), hit: true, held: (liveCount, totalCost))
    }

    /// Refreshes live slot `slot`'s recency within its region; an entry read while on probation moves to
    /// the protected segment.
    ///
    /// In a shard of a sharded cache a hit in the window or the protected segment only sets the slot's
    /// referenced bit (once), and the entry gets a second chance when it reaches its queue's front (see
    /// `popOldest(of:)`), as the shards of an LRU cache do: the hit then writes no line every use of the
    /// shard shares.
    @inlinable
    func applyHit(_ slot: Int32) {
        let region = region(of: slot)
        if region == PolicyRegion.probation {
            promote(slot)
        } else if policy == .secondChanceWindowTinyLFU {
            let stamp = stamps[Int(slot)]
            if stamp & PolicyRegion.referencedBit == 0 { stamps[Int(slot)] = stamp | PolicyRegion.referencedBit }
        } else {
            record(slot, in: region)
        }
    }

    /// The least recently used entry of the window or the protected segment, giving each referenced
    /// entry met on the way a second chance (its bit cleared, queued again at the back); `nil` when the
    /// region is empty.
    ///
    /// - Complexity: O(1) amortized: each hit sets at most one bit, which at most one second chance
    ///   clears.
    @inlinable
    func oldest(of region: UInt32) -> Int32? {
        while true {
            let found =
                region == PolicyRegion.window
                ? frequencyPolicy.window.oldest(stamps: stamps) : frequencyPolicy.protected.oldest(stamps: stamps)
            guard let slot = found else { return nil }
            guard stamps[Int(slot)] & PolicyRegion.referencedBit != 0 else { return slot }
            stamps[Int(slot)] &= ~PolicyRegion.referencedBit
            record(slot, in: region)
        }
    }

    /// Removes and returns ``oldest(of:)`` from its queue.
    @inlinable
    func popOldest(of region: UInt32) -> Int32? {
        guard let slot = oldest(of: region) else { return nil }
        if region == PolicyRegion.window {
            frequencyPolicy.window.start += 1
        } else {
            frequencyPolicy.protected.start += 1
        }
        return slot
    }

    /// Removes and returns the window's least recently used entry (``popOldest(of:)``), passing over
    /// `spared` while the window holds another entry; `nil` when the window is empty.
    ///
    /// An insertion spares its own entry: in a shard, the second chances `popOldest` hands out queue the
    /// window's read entries behind the new one, which would otherwise leave the window first, pushed out
    /// by its own insertion. It goes to the back once, behind them; their bits are then cleared, so it
    /// comes up again only when it is the window's last entry.
    @inlinable
    func popOldestOfWindow(sparing spared: Int32) -> Int32? {
        while let slot = popOldest(of: PolicyRegion.window) {
            guard slot == spared && frequencyPolicy.count(of: PolicyRegion.window) > 1 else { return slot }
            record(slot, in: PolicyRegion.window)
        }
        return nil
    }

    /// Moves a probation entry that was read to the protected segment, demoting the protected segment's
    /// least recently used entries to probation while it is over its budget.
    @inlinable
    func promote(_ slot: Int32) {
        move(slot, from: PolicyRegion.probation, to: PolicyRegion.protected)
        while frequencyPolicy.protectedIsOver {
            guard let demoted = popOldest(of: PolicyRegion.protected) else { break }
            move(demoted, from: PolicyRegion.protected, to: PolicyRegion.probation)
        }
    }

    // MARK: - Insertion and admission

    /// Places newly stored slot `slot` at the window's most recent end, lets a ghost hit resize the window,
    /// then restores the limits: window entries pushed out become candidates, each of which enters the main region only by beating the
    /// victims it would push out (TinyLFU admission); what is still over a limit after that is evicted.
    ///
    /// - Parameters:
    ///   - hash: The key's hash value (32 bits of it), kept in `hashes` for the sketch and the ghosts.
    ///   - cost: The entry's cost, already added to `totalCost`.
    ///   - replacing: Whether the entry replaced one of the same key (not a regret of ``DuelRegret``).
    @inlinable
    func insertByFrequency(_ slot: Int32, hash: UInt32, cost: Int, replacing: Bool, into released: inout Released) {
        frequencyPolicy.hashes[Int(slot)] = hash
        if !replacing { frequencyPolicy.duelRegret.noteInsertion(of: hash) }
        frequencyPolicy.noteSampledHeld(hash, cost: regionCost(of: slot), sign: 1)
        // A request is a read: this insertion counts only as the fill of a read that missed (see
        // `followsReadMiss(missesSoFar:)`); a set no read asked for is no request.
        let counted = !replacing && frequencyPolicy.followsReadMiss(missesSoFar: counters.misses)
        frequencyPolicy.noteSampledRequest(
            hash, cost: regionCost(of: slot), hit: false, counted: counted, held: (liveCount, totalCost))
        stamps[Int(slot)] = PolicyRegion.candidate << PolicyRegion.shift
        frequencyPolicy.adjust(PolicyRegion.candidate, count: 1, cost: costLimit == Int.max ? 0 : cost)
        // An entry costing more than the window's whole share skips it: let in, it would push the window's
        // other entries out to duel in its stead, and leave as a candidate itself only after them.
        let skipsWindow = regionCost(of: slot) > frequencyPolicy.windowCostLimit
        if !skipsWindow { move(slot, to: PolicyRegion.window) }
        // The sketch grows with the entries held, up to the count limit (rounded up to a power of two).
        let sketchCapacity = frequencyPolicy.sketch.capacity
        if liveCount > sketchCapacity && sketchCapacity < min(countLimit, FrequencySketch.maximumCapacity) {
            frequencyPolicy.resize(toCapacity: min(2 * sketchCapacity, countLimit))
            if countLimit >= frequencyPolicy.unlimitedCount { recountSampledHeld() }
        }
        if frequencyPolicy.adapt(toInsertionOf: hash, entries: liveCount) { rebalanceRegions(sparing: slot) }
        frequencyPolicy.sketch.increment(hash)
        var candidates = frequencyPolicy.candidates
        frequencyPolicy.candidates = []
        candidates.removeAll(keepingCapacity: true)
        while frequencyPolicy.windowIsOver {
            guard let candidate = popOldestOfWindow(sparing: slot) else { break }
            setRegion(of: candidate, to: PolicyRegion.candidate)
            candidates.append(candidate)
        }
        if skipsWindow { candidates.append(slot) }
        var next = 0
        // What the dueling candidate has won: a candidate's wins make room for itself only, so a large entry
        // behind it in `candidates` (one that skipped the window) duels for its own room instead of taking
        // room a frequent candidate won. It needs an entry's room only while the count is over (by one
        // entry at most, so with a count limit only this changes nothing), and its cost's.
        var won = (count: 0, cost: 0)
        while liveCount > countLimit || totalCost > costLimit {
            if next < candidates.count {
                let candidate = candidates[next]
                let skipped = skipsWindow && candidate == slot
                if (won.count > 0 || liveCount <= countLimit) && won.cost >= regionCost(of: candidate) {
                    move(candidate, to: PolicyRegion.probation)
                    next += 1
                    won = (0, 0)
                } else if let victim = mainVictim() ?? (skipped ? oldest(of: PolicyRegion.window) : nil),
                    admits(candidate, over: victim)
                {
                    // A skipped entry duels the window's oldest entry when the main region is empty (a window
                    // grown to the whole cache), as an entry in the window would be evicted for it there.
                    frequencyPolicy.duelRegret.noteWin(
                        over: frequencyPolicy.hashes[Int(victim)],
                        entries: min(countLimit, frequencyPolicy.sketch.capacity))
                    won = (won.count + 1, won.cost + regionCost(of: victim))
                    released.append(evict(victim))
                } else {
                    released.append(evict(candidate))
                    next += 1
                    won = (0, 0)
                }
            } else {
                guard let evicted = evictVictim(sparing: slot) else { break }
                released.append(evicted)
            }
        }
        while next < candidates.count {
            move(candidates[next], to: PolicyRegion.probation)
            next += 1
        }
        frequencyPolicy.candidates = candidates
    }

    /// Counts the sampled entries held again after a resize gave the miniature LRU a new sampling rate
    /// (under a cost limit alone, where it follows the sketch's size).
    ///
    /// - Complexity: O(*n*) in the entries held, once per doubling of the sketch.
    @usableFromInline @inline(never)
    func recountSampledHeld() {
        for entry in index.values {
            let slot = entry.slot
            guard stamps[Int(slot)] != 0 else { continue }
            frequencyPolicy.noteSampledHeld(frequencyPolicy.hashes[Int(slot)], cost: regionCost(of: slot), sign: 1)
        }
    }

    /// Whether `candidate` should take `victim`'s place: only if the sketch estimates it was used more
    /// often (by two uses or more while ``DuelRegret`` holds its margin). A tie keeps the victim, which the
    /// TinyLFU paper found better for skewed workloads.
    @inlinable
    func admits(_ candidate: Int32, over victim: Int32) -> Bool {
        let sketch = frequencyPolicy.sketch
        return sketch.frequency(frequencyPolicy.hashes[Int(candidate)])
            > sketch.frequency(frequencyPolicy.hashes[Int(victim)]) &+ frequencyPolicy.duelRegret.margin
    }

    /// The main region's next victim: the least recently used probation entry, else the least recently
    /// used protected one.
    @inlinable
    func mainVictim() -> Int32? {
        if let slot = frequencyPolicy.probation.oldest(stamps: stamps) { return slot }
        return oldest(of: PolicyRegion.protected)
    }

    /// The policy's next victim other than `spared`: the main region's (`mainVictim`), else the window's
    /// least recently used entry. Used when no candidate is left to duel, and by trimming.
    @inlinable
    func frequencyVictim(sparing spared: Int32) -> Int32? {
        if let slot = mainVictim() { return slot }
        guard let slot = oldest(of: PolicyRegion.window), slot != spared else { return nil }
        return slot
    }

    /// The policy's part of freeing live slot `slot`: its region's sizes, and for an eviction its key's
    /// hash among the ghosts of its region (a rejected candidate counts as the window's).
    @inlinable
    func removeByFrequency(_ slot: Int32, evicted: Bool) {
        let region = region(of: slot)
        let hash = frequencyPolicy.hashes[Int(slot)]
        if evicted {
            switch region {
            case PolicyRegion.probation, PolicyRegion.protected: frequencyPolicy.mainGhosts.insert(hash)
            default: frequencyPolicy.windowGhosts.insert(hash)
            }
        } else {
            frequencyPolicy.forgetSampled(hash)
        }
        frequencyPolicy.noteSampledHeld(hash, cost: regionCost(of: slot), sign: -1)
        frequencyPolicy.adjust(region, count: -1, cost: -regionCost(of: slot))
    }

    // MARK: - Regions

    /// Moves live slot `slot` to `region`'s most recent end.
    @inlinable
    func move(_ slot: Int32, to region: UInt32) {
        setRegion(of: slot, to: region)
        record(slot, in: region)
    }

    /// ``move(_:to:)`` for a slot known to be in region `old`: with both regions known where it is
    /// inlined, the sizes change without a `switch` each, and the stamp is written once, by `record`.
    ///
    /// (Until `record` writes it, the stamp still names `old`, so a restart of the ticks that the record
    /// may start keeps and renumbers the slot's record in `old`'s queue if it is still queued there; the
    /// new stamp makes it stale.)
    @inlinable @inline(__always)
    func move(_ slot: Int32, from old: UInt32, to region: UInt32) {
        let cost = regionCost(of: slot)
        frequencyPolicy.adjust(old, count: -1, cost: -cost)
        frequencyPolicy.adjust(region, count: 1, cost: cost)
        record(slot, in: region)
    }

    /// The cost slot `slot` adds to its region's total: its cost, or 0 without a cost limit, where no
    /// region has a cost budget (sparing a hit that moves an entry a read of the `costs` line).
    @inlinable
    func regionCost(of slot: Int32) -> Int {
        costLimit == Int.max ? 0 : costs[Int(slot)]
    }

    /// The region of live slot `slot`, from the top bits of its stamp.
    @inlinable
    func region(of slot: Int32) -> UInt32 {
        stamps[Int(slot)] >> PolicyRegion.shift
    }

    /// Changes the region in slot `slot`'s stamp and the regions' sizes, without queueing it (its records
    /// all become stale, as the stamp changed).
    @inlinable
    func setRegion(of slot: Int32, to region: UInt32) {
        let cost = regionCost(of: slot)
        frequencyPolicy.adjust(self.region(of: slot), count: -1, cost: -cost)
        frequencyPolicy.adjust(region, count: 1, cost: cost)
        let tick = stamps[Int(slot)] & Self.tickMask
        stamps[Int(slot)] = tick | region << PolicyRegion.shift
    }

    /// Stamps slot `slot` with the next tick and appends its record to `region`'s queue, compacting that
    /// queue when it holds twice the region's entries (plus slack) in records, spent ones included.
    @inlinable @inline(__always)
    func record(_ slot: Int32, in region: UInt32) {
        tick &+= 1
        // A W-TinyLFU table's ticks stay below 2^29, under the referenced bit and the region bits.
        if tick > Self.tickMask { renumberRegionQueues() }
        let stamp = tick | region << PolicyRegion.shift
        stamps[Int(slot)] = stamp
        let record = RecencyRecord(slot: slot, stamp: stamp)
        let live = frequencyPolicy.count(of: region)
        let slack = live + min(live, 1 << 24) + 16
        switch region {
        case PolicyRegion.window:
            frequencyPolicy.window.append(record)
            if frequencyPolicy.window.records.count > slack { frequencyPolicy.window.compact(stamps: stamps) }
        case PolicyRegion.probation:
            frequencyPolicy.probation.append(record)
            if frequencyPolicy.probation.records.count > slack { frequencyPolicy.probation.compact(stamps: stamps) }
        default:
            frequencyPolicy.protected.append(record)
            if frequencyPolicy.protected.records.count > slack { frequencyPolicy.protected.compact(stamps: stamps) }
        }
    }

    /// The tick bits of a W-TinyLFU table's stamp.
    @inlinable static var tickMask: UInt32 { PolicyRegion.referencedBit - 1 }

    /// Restarts the ticks when they reach 2^29: drops every stale record and numbers the current ones
    /// 1, 2, … (the window's, then probation's, then the protected segment's, each queue in order), in
    /// the records and their slots' stamps, and sets the tick after the last.
    ///
    /// Simply wrapping to 1 would let a record that stayed current through the wrap become current
    /// again once its slot, used in between, is stamped with the same tick (two current records for one
    /// slot). After the restart every record's tick is below the table's until the next restart, so a
    /// use always makes its slot's other records stale. The ticks given never exceed the entries held,
    /// which a W-TinyLFU table keeps below 2^28 (`maximumEntries`), so a restart comes at most once per
    /// 2^28 ticks (0 stays a free slot's stamp).
    ///
    /// - Complexity: O(*q*) in the records held.
    @usableFromInline @inline(never)
    func renumberRegionQueues() {
        var last: UInt32 = 0
        frequencyPolicy.window.renumber(stamps: stamps, after: &last)
        frequencyPolicy.probation.renumber(stamps: stamps, after: &last)
        frequencyPolicy.protected.renumber(stamps: stamps, after: &last)
        tick = last + 1
    }

    /// Brings the regions within budgets a ghost hit just changed: the window's least recently used
    /// entries other than `spared`, the entry being inserted (see ``popOldestOfWindow(sparing:)``), move
    /// to probation, and the protected segment's to probation, while over budget. `spared` stays in the
    /// window even when it alone is over the new budget: the insertion then pushes it out as a candidate,
    /// to duel for its room like any entry leaving the window.
    ///
    /// - Complexity: O(1) after a ghost hit, which moves each budget by at most `WindowTinyLFU.ghostStep`
    ///   entries times `WindowTinyLFU.largestGhostStepMultiple` (in a shard `shardGhostStep` times
    ///   `shardLargestGhostStepMultiple`, the same 24), or their share of the cost limit, so each loop moves
    ///   a few dozen entries at most. After a check against LRU that grew the window (at most once per
    ///   `lruCheckPeriod` sampled requests, about twice the table's entries in all requests) O(*n*): the
    ///   protected segment gives up to 80% of the growth to probation at once, 20% of the entries for a
    ///   quarter of the cache; amortized O(1) per request.
    @usableFromInline
    func rebalanceRegions(sparing spared: Int32) {
        while frequencyPolicy.windowIsOver {
            guard let slot = popOldestOfWindow(sparing: spared) else { break }
            guard slot != spared else {
                // Only a cost budget leaves the new entry over it alone (the window holds at least one entry).
                record(slot, in: PolicyRegion.window)
                break
            }
            move(slot, to: PolicyRegion.probation)
        }
        while frequencyPolicy.protectedIsOver {
            guard let slot = popOldest(of: PolicyRegion.protected) else { break }
            move(slot, to: PolicyRegion.probation)
        }
    }
}

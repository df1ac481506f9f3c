extension ShardTable {
    /// Checks the table's structure, for tests; runs with the table's lock held.
    ///
    /// Verifies that the index names distinct live slots holding their own keys, that free and live
    /// slots partition `0..<used`, that the recency queue holds exactly one current record per live slot
    /// and none for a free slot, that the total cost is the sum of the costs held, and that the table is
    /// within its limits.
    ///
    /// A W-TinyLFU table's buffered hits must name live slots with their own keys' hashes; they are
    /// applied before the rest is checked.
    ///
    /// - Returns: A description of the first violation found, or `nil` when the table is consistent.
    /// - Complexity: O(*n* + *q*) in the number of slots and queued records.
    func invariantViolation() -> String? {
        guard used <= capacity, capacity <= Self.maximumSlots else {
            return "used \(used) exceeds capacity \(capacity)"
        }
        if let problem = pendingHitViolation() { return problem }
        settleBufferedHits()
        var live = [Bool](repeating: false, count: used)
        var costSum = 0
        for (key, entry) in index {
            let slot = Int(entry.slot)
            guard slot >= 0, slot < used else { return "index names slot \(slot) outside 0..<\(used)" }
            guard !live[slot] else { return "two keys share slot \(slot)" }
            live[slot] = true
            guard keys[slot] == key else { return "slot \(slot) holds another key than the index says" }
            guard stamps[slot] != 0 else { return "live slot \(slot) has no stamp" }
            guard costs[slot] >= 0 else { return "slot \(slot) has negative cost \(costs[slot])" }
            costSum += costs[slot]
        }
        for free in freeSlots {
            guard free >= 0, Int(free) < used, !live[Int(free)] else {
                return "free slot \(free) is live or out of range"
            }
            guard stamps[Int(free)] == 0 else { return "free slot \(free) keeps a stamp" }
            live[Int(free)] = true
        }
        guard index.count + freeSlots.count == used else {
            return "\(index.count) live + \(freeSlots.count) free slots != \(used) used"
        }
        return policyInvariantViolation() ?? limitViolation(costSum: costSum)
    }

    /// Checks a W-TinyLFU table's buffered hits: fewer than the buffer holds, each naming a live slot
    /// with its own key's hash.
    func bufferedHitViolation() -> String? {
        guard frequencyPolicy.bufferedHitCount < WindowTinyLFU.hitBufferSize else {
            return "the hit buffer holds \(frequencyPolicy.bufferedHitCount) hits, more than it may keep unapplied"
        }
        for position in 0..<frequencyPolicy.bufferedHitCount {
            let slot = Int(frequencyPolicy.bufferedHit(position))
            guard slot >= 0, slot < used, stamps[slot] != 0, !freeSlots.contains(Int32(slot)) else {
                return "a buffered hit names slot \(slot), which is not live"
            }
            guard frequencyPolicy.hashes[slot] == UInt32(truncatingIfNeeded: keys[slot].hashValue) else {
                return "a buffered hit's slot \(slot) carries another key's hash"
            }
        }
        return nil
    }

    /// Checks an LRU table's queue: exactly one current record per live slot, none for a free slot.
    func recencyQueueViolation() -> String? {
        guard queueStart <= queue.count else { return "queue start \(queueStart) past its end \(queue.count)" }
        var current = 0
        for record in queue[queueStart...] {
            guard record.slot >= 0, Int(record.slot) < used else {
                return "queue names slot \(record.slot) outside 0..<\(used)"
            }
            if isCurrent(record) { current += 1 }
        }
        guard current == index.count else { return "queue holds \(current) current records for \(index.count) keys" }
        return nil
    }

    /// Checks the totals against the sum of the costs held and the limits.
    private func limitViolation(costSum: Int) -> String? {
        guard costSum == totalCost else { return "total cost \(totalCost) != sum of costs \(costSum)" }
        guard index.count <= countLimit else { return "count \(index.count) exceeds limit \(countLimit)" }
        guard totalCost <= costLimit else { return "total cost \(totalCost) exceeds limit \(costLimit)" }
        return nil
    }

    /// Checks a W-TinyLFU table's regions: every live slot has exactly one current record, in the queue
    /// of the region its stamp names (no slot is left a candidate between operations); each region's count
    /// and cost add up; the window and the protected segment are within their budgets; and the sketch
    /// is no larger than the limit calls for.
    ///
    /// - Complexity: O(*n* + *q*).
    func frequencyPolicyViolation() -> String? {
        let policy = frequencyPolicy
        var counts = [0, 0, 0, 0]
        var costSums = [0, 0, 0, 0]
        var sampledHeld = (count: 0, cost: 0)
        for (key, entry) in index {
            let region = Int(region(of: entry.slot))
            guard policy.hashes[Int(entry.slot)] == UInt32(truncatingIfNeeded: key.hashValue) else {
                return "slot \(entry.slot) holds another hash than its key's"
            }
            guard region != Int(PolicyRegion.candidate) else { return "slot \(entry.slot) is left a candidate" }
            counts[region] += 1
            costSums[region] += regionCost(of: entry.slot)
            if policy.miniature.samples(policy.hashes[Int(entry.slot)]) {
                sampledHeld = (sampledHeld.count + 1, sampledHeld.cost + regionCost(of: entry.slot))
            }
        }
        guard policy.sampledHeld == sampledHeld else {
            return "the miniature LRU counts \(policy.sampledHeld) sampled entries held, the table \(sampledHeld)"
        }
        guard policy.miniature.count <= policy.miniature.nodeCapacity else {
            return "the miniature LRU is over capacity"
        }
        for region in 0..<4 {
            let name = ["window", "probation", "protected", "candidate"][region]
            guard policy.count(of: UInt32(region)) == counts[region] else {
                return "\(name) counts \(policy.count(of: UInt32(region))) entries but holds \(counts[region])"
            }
            guard policy.cost(of: UInt32(region)) == costSums[region] else {
                return "\(name) counts cost \(policy.cost(of: UInt32(region))) but holds \(costSums[region])"
            }
        }
        var seen = [Bool](repeating: false, count: used)
        for (region, queue) in [policy.window, policy.probation, policy.protected].enumerated() {
            guard queue.start <= queue.records.count else { return "queue \(region) start past its end" }
            for record in queue.records[queue.start...] {
                let slot = Int(record.slot)
                guard slot >= 0, slot < used else { return "queue \(region) names slot \(slot) outside 0..<\(used)" }
                guard stamps[slot] & ~PolicyRegion.referencedBit == record.stamp else { continue }
                guard !seen[slot] else { return "slot \(slot) has two current records" }
                seen[slot] = true
                guard self.region(of: Int32(slot)) == UInt32(region) else {
                    return "slot \(slot) is current in queue \(region) but its stamp names another region"
                }
            }
        }
        for entry in index.values where !seen[Int(entry.slot)] {
            return "live slot \(entry.slot) has no current record"
        }
        guard !policy.windowIsOver else {
            return "window holds \(counts[0]) entries of cost \(costSums[0]) over its budget"
        }
        guard !policy.protectedIsOver else { return "protected segment over its budget" }
        guard policy.sketch.capacity <= max(FrequencySketch.wordCount(forCapacity: countLimit), 8) else {
            return "sketch sized for \(policy.sketch.capacity) entries above the count limit \(countLimit)"
        }
        return nil
    }
}

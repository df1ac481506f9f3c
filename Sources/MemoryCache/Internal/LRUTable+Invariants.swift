extension LRUTable {
    /// Checks the table's structure, for tests; runs with the table's lock held.
    ///
    /// Verifies that the index names distinct live slots holding their own keys, that free and live
    /// slots partition `0..<used`, that the recency queue holds exactly one current record per live slot
    /// and none for a free slot, that the total cost is the sum of the costs held, and that the table is
    /// within its limits.
    ///
    /// - Returns: A description of the first violation found, or `nil` when the table is consistent.
    /// - Complexity: O(*n* + *q*) in the number of slots and queued records.
    func invariantViolation() -> String? {
        guard used <= capacity, capacity <= Self.maximumSlots else {
            return "used \(used) exceeds capacity \(capacity)"
        }
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
        guard queueStart <= queue.count else { return "queue start \(queueStart) past its end \(queue.count)" }
        var current = 0
        for record in queue[queueStart...] {
            guard record.slot >= 0, Int(record.slot) < used else {
                return "queue names slot \(record.slot) outside 0..<\(used)"
            }
            if isCurrent(record) { current += 1 }
        }
        guard current == index.count else { return "queue holds \(current) current records for \(index.count) keys" }
        guard costSum == totalCost else { return "total cost \(totalCost) != sum of costs \(costSum)" }
        guard index.count <= countLimit else { return "count \(index.count) exceeds limit \(countLimit)" }
        guard totalCost <= costLimit else { return "total cost \(totalCost) exceeds limit \(costLimit)" }
        return nil
    }
}

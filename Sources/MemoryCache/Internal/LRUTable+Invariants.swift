extension LRUTable {
    /// Checks the table's structure, for tests; runs with the table's lock held.
    ///
    /// Verifies that the list is acyclic and doubly linked, that it holds exactly the indexed keys at the
    /// slots the index names, that free and live slots partition `0..<used`, that the total cost is the
    /// sum of the costs held, and that the table is within its limits.
    ///
    /// - Returns: A description of the first violation found, or `nil` when the table is consistent.
    /// - Complexity: O(*n*) in the number of slots.
    func invariantViolation() -> String? {
        guard used <= capacity, capacity <= Self.maximumSlots else {
            return "used \(used) exceeds capacity \(capacity)"
        }
        var live = [Bool](repeating: false, count: used)
        var listed = 0
        var costSum = 0
        var previous = Self.none
        var slot = head
        while slot != Self.none {
            guard slot >= 0, Int(slot) < used else { return "list reaches slot \(slot) outside 0..<\(used)" }
            guard !live[Int(slot)] else { return "list revisits slot \(slot): a cycle" }
            live[Int(slot)] = true
            listed += 1
            let node = nodes[Int(slot)]
            guard node.prev == previous else {
                return "slot \(slot) links back to \(node.prev), expected \(previous)"
            }
            guard index[node.key] == slot else { return "index does not map slot \(slot)'s key to it" }
            guard node.cost >= 0 else { return "slot \(slot) has negative cost \(node.cost)" }
            costSum += node.cost
            previous = slot
            slot = node.next
        }
        guard previous == tail else { return "tail is \(tail), but the list ends at \(previous)" }
        guard listed == index.count else { return "list holds \(listed) nodes, index \(index.count) keys" }
        for free in freeSlots {
            guard free >= 0, Int(free) < used, !live[Int(free)] else {
                return "free slot \(free) is live or out of range"
            }
            live[Int(free)] = true
        }
        guard listed + freeSlots.count == used else {
            return "\(listed) live + \(freeSlots.count) free slots != \(used) used"
        }
        guard costSum == totalCost else { return "total cost \(totalCost) != sum of costs \(costSum)" }
        guard index.count <= countLimit else { return "count \(index.count) exceeds limit \(countLimit)" }
        guard totalCost <= costLimit else { return "total cost \(totalCost) exceeds limit \(costLimit)" }
        return nil
    }
}

/// A SIEVE cache simulation (Zhang, Yang, Yue, Vigfusson and Rashmi, "SIEVE is Simpler than LRU: an
/// Efficient Turn-Key Eviction Algorithm for Web Caches", NSDI 2024), written for the hit-ratio rows.
///
/// Objects sit in one FIFO queue, newest at the head, each with a visited bit that a hit sets. A hand
/// walks from the tail towards the head: a visited object loses its bit and stays where it is, the first
/// unvisited one is evicted, and the hand keeps its place for the next eviction, wrapping to the tail.
/// Kept as plain as possible, like ``ReferenceLRU``.
struct ReferenceSIEVE {
    private let capacity: Int
    private var slotOfKey: [Int: Int] = [:]
    private var keys: [Int] = []
    private var visited: [Bool] = []
    private var towardsHead: [Int] = []  // the next newer object
    private var towardsTail: [Int] = []  // the next older object
    private var head = -1  // newest
    private var tail = -1  // oldest
    private var hand = -1

    init(capacity: Int) {
        self.capacity = capacity
        slotOfKey.reserveCapacity(capacity)
    }

    /// Requests `key`; returns whether it was held. A miss inserts it.
    mutating func access(_ key: Int) -> Bool {
        if let slot = slotOfKey[key] {
            visited[slot] = true
            return true
        }
        guard capacity > 0 else { return false }
        let slot: Int
        if keys.count < capacity {
            slot = keys.count
            keys.append(key)
            visited.append(false)
            towardsHead.append(-1)
            towardsTail.append(-1)
        } else {
            slot = evict()
            keys[slot] = key
            visited[slot] = false
        }
        slotOfKey[key] = slot
        // Insert at the head.
        towardsTail[slot] = head
        towardsHead[slot] = -1
        if head >= 0 { towardsHead[head] = slot }
        head = slot
        if tail < 0 { tail = slot }
        return false
    }

    /// Unlinks the object the hand settles on and returns its slot.
    private mutating func evict() -> Int {
        var slot = hand >= 0 ? hand : tail
        while visited[slot] {
            visited[slot] = false
            slot = towardsHead[slot] >= 0 ? towardsHead[slot] : tail
        }
        hand = towardsHead[slot]
        slotOfKey[keys[slot]] = nil
        let newer = towardsHead[slot]
        let older = towardsTail[slot]
        if newer >= 0 { towardsTail[newer] = older } else { head = older }
        if older >= 0 { towardsHead[older] = newer } else { tail = newer }
        return slot
    }
}

/// An exact least-recently-used cache simulation, written for the hit-ratio check and nothing else.
///
/// The textbook structure: a dictionary from key to slot, and a doubly-linked recency list threaded
/// through arrays of slot indices. A hit moves the slot to the front; a miss inserts at the front and,
/// when full, reuses the slot at the back. It is the yardstick for MemoryCache's eviction order, so it
/// is kept as plain as possible.
struct ReferenceLRU {
    private let capacity: Int
    private var slotOfKey: [Int: Int] = [:]
    private var keys: [Int] = []
    private var previous: [Int] = []
    private var next: [Int] = []
    private var head = -1  // most recently used
    private var tail = -1  // least recently used

    init(capacity: Int) {
        self.capacity = capacity
        slotOfKey.reserveCapacity(capacity)
    }

    /// Requests `key`; returns whether it was held. A miss inserts it.
    mutating func access(_ key: Int) -> Bool {
        if let slot = slotOfKey[key] {
            moveToFront(slot)
            return true
        }
        guard capacity > 0 else { return false }
        let slot: Int
        if keys.count < capacity {
            slot = keys.count
            keys.append(key)
            previous.append(-1)
            next.append(-1)
        } else {
            slot = tail
            slotOfKey[keys[slot]] = nil
            unlink(slot)
            keys[slot] = key
        }
        slotOfKey[key] = slot
        pushFront(slot)
        return false
    }

    private mutating func moveToFront(_ slot: Int) {
        guard slot != head else { return }
        unlink(slot)
        pushFront(slot)
    }

    private mutating func unlink(_ slot: Int) {
        let before = previous[slot]
        let after = next[slot]
        if before >= 0 { next[before] = after } else { head = after }
        if after >= 0 { previous[after] = before } else { tail = before }
        previous[slot] = -1
        next[slot] = -1
    }

    private mutating func pushFront(_ slot: Int) {
        previous[slot] = -1
        next[slot] = head
        if head >= 0 { previous[head] = slot }
        head = slot
        if tail < 0 { tail = slot }
    }
}

extension ReferenceLRU {
    /// Checks the linked-list bookkeeping against the most naive LRU there is (an array kept in recency
    /// order) on `trace`, and returns whether every request agreed.
    static func agreesWithNaiveLRU(on trace: some Sequence<Int>, capacity: Int) -> Bool {
        var reference = ReferenceLRU(capacity: capacity)
        var recency: [Int] = []  // most recently used last
        for key in trace {
            let naiveHit: Bool
            if let position = recency.firstIndex(of: key) {
                recency.remove(at: position)
                naiveHit = true
            } else {
                if recency.count == capacity { recency.removeFirst() }
                naiveHit = false
            }
            recency.append(key)
            if reference.access(key) != naiveHit { return false }
        }
        return true
    }
}

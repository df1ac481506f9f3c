/// A deliberately simple LRU model (an array ordered from least to most recently used) that the real
/// cache must agree with, hit for hit and entry for entry.
struct ReferenceLRU {
    private(set) var order: [(key: Int, value: Int, cost: Int)] = []
    let countLimit: Int
    let costLimit: Int
    private(set) var hits = 0
    private(set) var misses = 0
    private(set) var evictions = 0

    init(countLimit: Int, costLimit: Int) {
        self.countLimit = countLimit
        self.costLimit = costLimit
    }

    var totalCost: Int { order.reduce(0) { $0 + $1.cost } }

    mutating func value(forKey key: Int) -> Int? {
        guard let position = order.firstIndex(where: { $0.key == key }) else {
            misses += 1
            return nil
        }
        hits += 1
        let entry = order.remove(at: position)
        order.append(entry)
        return entry.value
    }

    mutating func setValue(_ value: Int, forKey key: Int, cost: Int) {
        order.removeAll { $0.key == key }
        guard cost <= costLimit else { return }
        order.append((key, value, cost))
        while order.count > countLimit || totalCost > costLimit { evictOne() }
    }

    mutating func removeValue(forKey key: Int) { order.removeAll { $0.key == key } }

    mutating func trim(toCount count: Int) {
        while order.count > count { evictOne() }
    }

    private mutating func evictOne() {
        order.removeFirst()
        evictions += 1
    }
}

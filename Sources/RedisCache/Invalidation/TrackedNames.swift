/// The bounded map from a Redis key name back to the cache key it names, for the keys this process used
/// recently: client-tracking messages carry only names, and a name is an HMAC that cannot be inverted.
///
/// Two generations approximate least-recently-used order in O(1): names go into the current generation;
/// when it holds half the limit, it becomes the previous one and the previous one is dropped. A name
/// looked up or used again while in the previous generation moves back to the current one. So at most
/// ``limit`` names are kept, and a name survives at least `limit / 2` uses of other names.
///
/// Dropping names is safe only while the dropped keys are no longer held above: ``hasDropped`` records
/// that some were dropped, and the hub then treats an unknown name as "anything may have changed" until
/// it next publishes `.all` (after which every copy above was placed by a read or write that named its
/// key again).
///
/// Not thread-safe: the hub keeps it under its lock.
struct TrackedNames<Key> {
    /// The most names kept.
    let limit: Int
    private var current: [[UInt8]: Key] = [:]
    private var previous: [[UInt8]: Key] = [:]
    /// Whether names were dropped since the last ``forgetDrops()``.
    private(set) var hasDropped = false

    init(limit: Int) {
        self.limit = max(2, limit)
    }

    /// Names held.
    var count: Int { current.count + previous.count }

    /// Records that `name` names `key`.
    ///
    /// - Complexity: O(1) amortized (a generation change drops a whole dictionary at once).
    mutating func insert(_ name: [UInt8], for key: Key) {
        if current.updateValue(key, forKey: name) == nil {
            previous[name] = nil
            rotateIfFull()
        }
    }

    /// The key `name` names, when it is known.
    mutating func key(for name: [UInt8]) -> Key? {
        if let key = current[name] { return key }
        guard let key = previous.removeValue(forKey: name) else { return nil }
        current[name] = key
        rotateIfFull()
        return key
    }

    /// The keys of the names `isIncluded` accepts, from both generations.
    ///
    /// - Complexity: O(*n*) in the names held.
    func keys(where isIncluded: ([UInt8]) -> Bool) -> [Key] {
        current.compactMap { isIncluded($0.key) ? $0.value : nil }
            + previous.compactMap { isIncluded($0.key) ? $0.value : nil }
    }

    /// Clears ``hasDropped``: everything held above was just removed.
    mutating func forgetDrops() { hasDropped = false }

    /// Forgets every name.
    mutating func removeAll() {
        current = [:]
        previous = [:]
        hasDropped = false
    }

    private mutating func rotateIfFull() {
        guard current.count >= limit / 2 else { return }
        if !previous.isEmpty { hasDropped = true }
        previous = current
        current = [:]
    }
}

extension TrackedNames: Sendable where Key: Sendable {}

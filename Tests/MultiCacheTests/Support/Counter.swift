import CacheCore

/// A counter shared between a loader and the test.
final class Counter: Sendable {
    private let count = Locked(0)

    /// Adds one and returns the new count.
    @discardableResult
    func increment() -> Int {
        count.withLock { count in
            count += 1; return count
        }
    }

    /// The current count.
    var value: Int { count.value }
}

import CacheCore
import Foundation

/// The invalidations the peer's `MultiCache` applied, and whoever waits for one.
final class Applied: @unchecked Sendable {
    // @unchecked Sendable is sound: every property is touched only under `condition`'s lock.
    private let condition = NSCondition()
    private var keys: [String: Int] = [:]
    private var fullCount = 0
    private var flushCount = 0

    func record(_ invalidation: CacheInvalidation<String>) {
        condition.withLock {
            switch invalidation {
            case .keys(let invalidated): for key in invalidated { keys[key, default: 0] += 1 }
            case .tags: fullCount += 1
            case .all:
                fullCount += 1
                flushCount += 1
            }
            condition.broadcast()
        }
    }

    /// What ``await(_:orAll:)`` saw.
    enum Outcome { case key, all, timeout }

    /// Waits (blocking) until `key` was invalidated (or, with `orAll`, until anything was applied as
    /// `.all`, which consumes every `.all` so far), or until 10 s pass.
    func await(_ key: String, orAll: Bool = false) -> Outcome {
        let deadline = Date().addingTimeInterval(10)
        return condition.withLock {
            while true {
                if let count = keys[key], count > 0 {
                    keys[key] = count - 1
                    return .key
                }
                if orAll, fullCount > 0 {
                    fullCount = 0
                    return .all
                }
                guard condition.wait(until: deadline) else { return .timeout }
            }
        }
    }

    /// How many `.all` (flushes of the memory tier) were applied so far; never consumed.
    var flushes: Int { condition.withLock { flushCount } }

    /// Waits (blocking) until more than `seen` flushes were applied, or until 10 s pass; returns the count.
    func awaitFlush(after seen: Int) -> Int {
        let deadline = Date().addingTimeInterval(10)
        return condition.withLock {
            while flushCount <= seen && condition.wait(until: deadline) {}
            return flushCount
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Counters kept per process until they are merged into `store.stats`.
///
/// Every counter stays in `0...Int.max`: sums saturate at `Int.max` and differences at 0, so counters
/// read from a damaged or hostile file can never trap on overflow (statistics are advisory).
struct StatisticsCounters: Codable, Sendable, Equatable {
    var hits = 0
    var misses = 0
    var insertions = 0
    var evictions = 0
    var expirations = 0
    var corruptEntriesRemoved = 0
    var readFailures = 0

    static var fields: [WritableKeyPath<Self, Int>] {
        [
            \.hits, \.misses, \.insertions, \.evictions, \.expirations, \.corruptEntriesRemoved, \.readFailures,
        ]
    }

    static func + (lhs: Self, rhs: Self) -> Self {
        var sum = lhs
        for field in fields {
            let (value, overflow) = max(lhs[keyPath: field], 0).addingReportingOverflow(max(rhs[keyPath: field], 0))
            sum[keyPath: field] = overflow ? .max : value
        }
        return sum
    }

    static func - (lhs: Self, rhs: Self) -> Self {
        var difference = lhs
        for field in fields {
            // Both sides are in 0...Int.max, so the subtraction cannot overflow.
            difference[keyPath: field] = max(max(lhs[keyPath: field], 0) - max(rhs[keyPath: field], 0), 0)
        }
        return difference
    }

    var isZero: Bool { self == StatisticsCounters() }
}

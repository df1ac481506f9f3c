import Foundation

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

/// The `store.stats` file: `{"format":1,"counters":{...}}`. Unreadable or damaged contents count as
/// zero (statistics are advisory; they never stop the cache), counter by counter.
struct StatisticsFile: Codable {
    var format = 1
    var counters = StatisticsCounters()

    /// A well-formed file is under 300 bytes; a larger one is damaged and is not read.
    static let maxSize = 4096

    init(counters: StatisticsCounters) { self.counters = counters }

    /// Decodes the file: every counter that is missing, negative or not an integer in range counts as 0.
    ///
    /// - Returns: The counters, and whether the file was clean (format 1, every counter present and valid).
    static func decode(_ data: Data) -> (counters: StatisticsCounters, isClean: Bool) {
        guard let file = try? JSONDecoder().decode(Lenient.self, from: data), file.format == 1 else {
            return (StatisticsCounters(), false)
        }
        var counters = StatisticsCounters()
        var isClean = true
        for (key, field) in zip(Lenient.CounterKeys.allCases, StatisticsCounters.fields) {
            if let value = file.values[key], value >= 0 {
                counters[keyPath: field] = value
            } else {
                isClean = false
            }
        }
        return (counters, isClean)
    }

    /// The file read counter by counter, so one damaged value does not discard the others.
    private struct Lenient: Decodable {
        enum Keys: String, CodingKey { case format, counters }
        /// In the order of ``StatisticsCounters/fields``.
        enum CounterKeys: String, CodingKey, CaseIterable {
            case hits, misses, insertions, evictions, expirations, corruptEntriesRemoved, readFailures
        }

        var format: Int?
        var values: [CounterKeys: Int] = [:]

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            format = try? container.decode(Int.self, forKey: .format)
            let counters = try container.nestedContainer(keyedBy: CounterKeys.self, forKey: .counters)
            for key in CounterKeys.allCases {
                values[key] = try? counters.decode(Int.self, forKey: key)
            }
        }
    }

    static func encode(_ counters: StatisticsCounters) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(StatisticsFile(counters: counters))
    }
}

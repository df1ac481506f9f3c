#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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

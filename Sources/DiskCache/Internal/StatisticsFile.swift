import Foundation

/// Counters kept per process until they are merged into `store.stats`.
struct StatisticsCounters: Codable, Sendable, Equatable {
    var hits = 0
    var misses = 0
    var insertions = 0
    var evictions = 0
    var expirations = 0
    var corruptEntriesRemoved = 0
    var readFailures = 0

    static func + (lhs: Self, rhs: Self) -> Self {
        var sum = lhs
        sum.add(rhs, sign: 1)
        return sum
    }

    static func - (lhs: Self, rhs: Self) -> Self {
        var difference = lhs
        difference.add(rhs, sign: -1)
        return difference
    }

    private mutating func add(_ other: Self, sign: Int) {
        hits += sign * other.hits
        misses += sign * other.misses
        insertions += sign * other.insertions
        evictions += sign * other.evictions
        expirations += sign * other.expirations
        corruptEntriesRemoved += sign * other.corruptEntriesRemoved
        readFailures += sign * other.readFailures
    }

    var isZero: Bool { self == StatisticsCounters() }
}

/// The `store.stats` file: `{"format":1,"counters":{...}}`. Unreadable or damaged contents count as
/// zero (statistics are advisory; they never stop the cache).
struct StatisticsFile: Codable {
    var format = 1
    var counters = StatisticsCounters()

    static func read(_ path: String) -> StatisticsCounters {
        guard let data = FileManager.default.contents(atPath: path),
            let file = try? JSONDecoder().decode(StatisticsFile.self, from: data), file.format == 1
        else { return StatisticsCounters() }
        return file.counters
    }

    static func encode(_ counters: StatisticsCounters) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(StatisticsFile(counters: counters))
    }
}

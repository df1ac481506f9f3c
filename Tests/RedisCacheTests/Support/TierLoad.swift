import CacheCore
import Foundation
import RedisCache

/// A read/write load on one tier for the cluster fault suites: `tasks` tasks, each writing and reading keys of
/// its own (so each key has one writer and "the last value written" is well defined), until told to stop.
///
/// Every operation is recorded with the primary that serves its key, when it started, how long it took and how
/// it failed, and every read is checked: it must return a miss or a value this task may have left there — the
/// last one whose write succeeded, or one whose write failed since (a failed write may still have been applied).
/// Anything else (another key's value, an older overwritten one) is a wrong value.
struct TierLoad {
    /// One operation of the load.
    struct Sample: Sendable {
        /// The port of the primary that served the key when the load started.
        var port: Int
        var isWrite: Bool
        var start: ContinuousClock.Instant
        var duration: Duration
        /// What the caller was thrown, or `nil` for a success.
        var failure: String?

        var end: ContinuousClock.Instant { start + duration }
    }

    /// Everything the load recorded.
    struct Record: Sendable {
        var samples: [Sample] = []
        /// One line per wrong value read: the key, what came back, what was allowed.
        var wrongValues: [String] = []

        /// The failures, by their description, with how often each occurred.
        var failureCounts: [String: Int] {
            samples.reduce(into: [:]) { counts, sample in
                if let failure = sample.failure { counts[failure, default: 0] += 1 }
            }
        }
    }

    let cache: RedisCache<String, Data>
    /// The keys of each task.
    let keys: [[String]]
    /// The port of the primary of each key.
    let ports: [String: Int]

    /// Runs the load until `stop` returns true; the operations already running finish first.
    func run(until stop: @escaping @Sendable () -> Bool) async -> Record {
        await withTaskGroup(of: Record.self) { group in
            for taskKeys in keys {
                group.addTask { await Self.task(cache: cache, keys: taskKeys, ports: ports, stop: stop) }
            }
            var record = Record()
            for await part in group {
                record.samples += part.samples
                record.wrongValues += part.wrongValues
            }
            record.samples.sort { $0.start < $1.start }
            return record
        }
    }

    private static func task(
        cache: RedisCache<String, Data>, keys: [String], ports: [String: Int], stop: @Sendable () -> Bool
    ) async -> Record {
        var record = Record()
        var allowed: [String: Set<Data>] = [:]
        var version = 0
        var generator = SystemRandomNumberGenerator()
        while !stop() {
            let key = keys.randomElement(using: &generator)!
            let isWrite = Bool.random(using: &generator)
            let start = ContinuousClock.now
            var failure: String?
            if isWrite {
                version += 1
                let value = Data("\(key)#\(version)".utf8)
                do {
                    try await cache.setValue(value, forKey: key, expiry: .hours(1))
                    allowed[key] = [value]
                } catch {
                    allowed[key, default: []].insert(value)
                    failure = Self.describe(error)
                }
            } else {
                do {
                    if let value = try await cache.value(forKey: key), !allowed[key, default: []].contains(value) {
                        let seen = String(decoding: value, as: UTF8.self)
                        let expected = allowed[key, default: []].map { String(decoding: $0, as: UTF8.self) }.sorted()
                        record.wrongValues.append("\(key): read \(seen), allowed \(expected)")
                    }
                } catch {
                    failure = Self.describe(error)
                }
            }
            record.samples.append(
                Sample(
                    port: ports[key] ?? 0, isWrite: isWrite, start: start, duration: ContinuousClock.now - start,
                    failure: failure))
        }
        return record
    }

    /// The error's type and description, without the parts that differ between occurrences (ports, times).
    private static func describe(_ error: any Error) -> String {
        let text = "\(type(of: error)): \(error)"
        return String(text.prefix(160))
    }
}

extension Array where Element == Duration {
    /// The value at fraction `quantile` (0…1) of the sorted durations, nearest rank; zero when empty.
    func quantile(_ quantile: Double) -> Duration {
        guard !isEmpty else { return .zero }
        let sorted = self.sorted()
        let rank = Int((quantile * Double(sorted.count)).rounded(.up)) - 1
        return sorted[Swift.max(0, Swift.min(sorted.count - 1, rank))]
    }
}

extension Duration {
    /// Milliseconds, for the figures a suite prints.
    var milliseconds: Double {
        Double(components.seconds) * 1_000 + Double(components.attoseconds) / 1e15
    }
}

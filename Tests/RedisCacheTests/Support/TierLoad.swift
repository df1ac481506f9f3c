import CacheCore
import Foundation
import RedisCache

/// A read/write load on one tier for the cluster fault suites: `tasks` tasks, each writing and reading keys of
/// its own (so each key has one writer and "the last value written" is well defined), until told to stop.
///
/// Every operation is recorded with the primary that serves its key, when it started, how long it took and how
/// it failed, and every read is checked: it must return a miss or a value this task may have left there — the
/// last one whose write succeeded, or one whose write failed since (a failed write may still have been applied).
/// Anything else (another key's value, an older overwritten one) is a wrong value. `progress` counts completed
/// operations as they happen, so a test waits for the load to have done something, never for a time.
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

    /// A read that returned a value the task could not have left there.
    struct WrongValue: Sendable, CustomStringConvertible {
        var key: String
        /// The port of the primary that served the key when the load started.
        var port: Int
        var read: String
        var allowed: [String]
        /// When the value read is an older one this task wrote to this key: each later write the server
        /// acknowledged (start and end), every one of which the server must have lost for that read. `nil`
        /// when the value is anything else (another key's, one never written), which no loss inside Redis
        /// explains.
        var lostWrites: [ClosedRange<ContinuousClock.Instant>]?

        var description: String { "\(key) on \(port): read \(read), allowed \(allowed)" }
    }

    /// Everything the load recorded.
    struct Record: Sendable {
        var samples: [Sample] = []
        var wrongValues: [WrongValue] = []

        /// The failures, by their description, with how often each occurred.
        var failureCounts: [String: Int] {
            samples.reduce(into: [:]) { counts, sample in
                if let failure = sample.failure { counts[failure, default: 0] += 1 }
            }
        }
    }

    /// Counts of the operations completed so far, per primary port, updated as each one ends.
    struct Progress: Sendable {
        var successes: [Int: Int] = [:]
        /// Successes per port of operations that started at or after ``mark``.
        var successesSinceMark: [Int: Int] = [:]
        var mark: ContinuousClock.Instant?

        /// Starts counting ``successesSinceMark`` afresh from `instant`.
        mutating func mark(_ instant: ContinuousClock.Instant) {
            mark = instant
            successesSinceMark = [:]
        }
    }

    let cache: RedisCache<String, Data>
    /// The keys of each task.
    let keys: [[String]]
    /// The port of the primary of each key.
    let ports: [String: Int]
    /// Updated by the running load; read by the test to wait for events of the load.
    let progress = Locked(Progress())

    /// Runs the load until `stop` returns true; the operations already running finish first.
    func run(until stop: @escaping @Sendable () -> Bool) async -> Record {
        await withTaskGroup(of: Record.self) { group in
            for taskKeys in keys {
                group.addTask {
                    await Self.task(cache: cache, keys: taskKeys, ports: ports, progress: progress, stop: stop)
                }
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

    /// Waits until `condition` holds for the progress, polling every 2 ms; `false` when `timeout` (a guard
    /// against a hang, never a measure of speed) passed first.
    func wait(timeout: Duration, until condition: @escaping @Sendable (Progress) -> Bool) async -> Bool {
        await RedisTesting.waitAsync(timeout: timeout) { progress.withLock { condition($0) } }
    }

    private static func task(
        cache: RedisCache<String, Data>, keys: [String], ports: [String: Int], progress: Locked<Progress>,
        stop: @Sendable () -> Bool
    ) async -> Record {
        var record = Record()
        var allowed: [String: Set<Data>] = [:]
        // The acknowledged writes of each key, oldest first: version and when the write started and ended.
        var acknowledged: [String: [(version: Int, span: ClosedRange<ContinuousClock.Instant>)]] = [:]
        var written: [String: Set<Int>] = [:]
        var version = 0
        var generator = SystemRandomNumberGenerator()
        while !stop() {
            let key = keys.randomElement(using: &generator)!
            let port = ports[key] ?? 0
            let isWrite = Bool.random(using: &generator)
            let start = ContinuousClock.now
            var failure: String?
            if isWrite {
                version += 1
                let value = Data("\(key)#\(version)".utf8)
                written[key, default: []].insert(version)
                do {
                    try await cache.setValue(value, forKey: key, expiry: .hours(1))
                    allowed[key] = [value]
                    acknowledged[key, default: []].append((version, start...ContinuousClock.now))
                } catch {
                    allowed[key, default: []].insert(value)
                    failure = Self.describe(error)
                }
            } else {
                do {
                    if let value = try await cache.value(forKey: key), !allowed[key, default: []].contains(value) {
                        let read = String(decoding: value, as: UTF8.self)
                        let older = Self.version(of: read, key: key).flatMap { readVersion in
                            written[key, default: []].contains(readVersion)
                                ? acknowledged[key, default: []].filter { $0.version > readVersion }.map(\.span)
                                : nil
                        }
                        record.wrongValues.append(
                            WrongValue(
                                key: key, port: port, read: read,
                                allowed: allowed[key, default: []].map { String(decoding: $0, as: UTF8.self) }
                                    .sorted(),
                                lostWrites: older))
                    }
                } catch {
                    failure = Self.describe(error)
                }
            }
            let end = ContinuousClock.now
            if failure == nil {
                progress.withLock { progress in
                    progress.successes[port, default: 0] += 1
                    if let mark = progress.mark, start >= mark { progress.successesSinceMark[port, default: 0] += 1 }
                }
            }
            record.samples.append(
                Sample(port: port, isWrite: isWrite, start: start, duration: end - start, failure: failure))
        }
        return record
    }

    /// The version in a value `"<key>#<version>"` of `key`, or `nil` for any other value.
    private static func version(of value: String, key: String) -> Int? {
        let prefix = "\(key)#"
        guard value.hasPrefix(prefix) else { return nil }
        return Int(value.dropFirst(prefix.count))
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

extension ClosedRange where Bound == ContinuousClock.Instant {
    /// Whether every write `wrong` says was lost overlaps this span of time.
    func overlaps(_ wrong: TierLoad.WrongValue) -> Bool {
        (wrong.lostWrites ?? []).allSatisfy { overlaps($0) }
    }
}

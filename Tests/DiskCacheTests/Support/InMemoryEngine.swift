import CacheCore
import Foundation
import SealedRecord

@testable import DiskCache

/// A storage engine that keeps its records in a dictionary: the test double of the engine seam
/// (STYLE.md #20), so the contract tests show what any engine must do without a file or a database.
///
/// Records are not sealed (nothing leaves the process) but are sized as a sealed record would be
/// (``EntryRecord/overhead`` plus key and value), so totals and limits read like the file engine's. Its
/// reads judge a record with the sealed-record kernel's one liveness verdict, as every engine does.
///
/// Thread safety: one lock around the whole state, held for in-memory work only and never while the
/// observer runs. A record a read finds expired is removed under the same lock that judged it, so "remove
/// if unchanged" holds by construction.
final class InMemoryEngine: StorageEngine {
    private struct Stored {
        var record: EntryRecord
        var size: Int
        var lastAccess: Date
    }

    private struct State {
        var records: [Data: Stored] = [:]
        var tagVersions: [String: UInt64] = [:]
        var counters = StatisticsCounters()
        var epoch: UInt64 = 1
    }

    let configuration: DiskCacheConfiguration
    private let state = Locked(State())
    private let keyLocks = Locked<[Data: Int]>([:])
    private let events: HeldEvents

    init(configuration: DiskCacheConfiguration) {
        self.configuration = configuration
        events = HeldEvents(observer: configuration.observer)
    }

    private var now: Date { configuration.clock.now }

    // MARK: - Records

    func read(keyBytes: Data, includingStale: Bool) throws -> EntryRecord? {
        let now = self.now
        return state.withLock { state -> EntryRecord? in
            guard let stored = state.records[keyBytes] else {
                state.counters.misses += 1
                return nil
            }
            var record = stored.record
            var stamped: [String: UInt64] = [:]
            if record.header.hasTags {
                guard let (versions, value) = TagBlock.decode(record.valueBytes) else {
                    state.records[keyBytes] = nil
                    state.counters.misses += 1
                    return nil
                }
                stamped = versions
                record.valueBytes = value
                record.tags = Set(versions.keys)
            }
            // A tag without a counter matches no stamp (FenceCounter's rule, as the file engine reads it).
            let current = state.tagVersions.filter { stamped[$0.key] != nil }
            // The kernel's one verdict, as the file engine and RedisCache use it.
            switch record.header.stamp(tagVersions: stamped).liveness(
                currentEpoch: state.epoch, currentTagVersions: current, at: now)
            {
            case .live:
                break
            case .servableStale:
                if includingStale { return record }
                state.counters.misses += 1
                return nil
            case .expired:
                state.records[keyBytes] = nil
                state.counters.expirations += 1
                state.counters.misses += 1
                return nil
            case .fencedByTag, .wrongEpoch:
                state.records[keyBytes] = nil
                state.counters.misses += 1
                return nil
            }
            state.records[keyBytes]?.lastAccess = now
            state.counters.hits += 1
            return record
        }
    }

    func write(
        keyBytes: Data, valueBytes: Data, expiresAt: Date?, cost: Int?, staleUntil: Date?, hasTags: Bool
    ) throws {
        let now = self.now
        if let expiresAt, now >= expiresAt { return try remove(keyBytes: keyBytes) }
        if configuration.byteLimit == 0 || configuration.countLimit == 0 {
            try remove(keyBytes: keyBytes)
            return try applyLimits()
        }
        let size = EntryRecord.overhead + keyBytes.count + valueBytes.count
        if let byteLimit = configuration.byteLimit, size > byteLimit {
            try remove(keyBytes: keyBytes)
            throw CacheError(.entryTooLarge, "entry of \(size) bytes exceeds the store's limit of \(byteLimit) bytes")
        }
        state.withLock { state in
            let header = EntryRecord.Header(
                epochID: state.epoch, createdAt: now, expiresAt: expiresAt, cost: cost, keyLength: keyBytes.count,
                valueLength: valueBytes.count, staleUntil: staleUntil, hasTags: hasTags)
            state.records[keyBytes] = Stored(
                record: EntryRecord(header: header, keyBytes: keyBytes, valueBytes: valueBytes), size: size,
                lastAccess: now)
            state.counters.insertions += 1
        }
        try enforceLimits(sparing: keyBytes)
    }

    func remove(keyBytes: Data) throws {
        state.withLock { $0.records[keyBytes] = nil }
    }

    func removeAll() throws {
        state.withLock {
            $0.epoch += 1
            $0.records = [:]
        }
    }

    // MARK: - Listing and maintenance

    func verify(
        progress: ((Int, Int) -> Void)?, visit: (EntryRecord, StoredEntryFacts) -> Void
    ) throws -> DiskCacheVerifyReport {
        let keys = state.withLock { Array($0.records.keys) }
        var checked = 0
        var issues: [DiskCacheVerifyReport.Issue] = []
        for (position, keyBytes) in keys.enumerated() {
            progress?(position, keys.count)
            let facts = state.withLock { state in
                state.records[keyBytes].map { StoredEntryFacts(size: $0.size, lastAccess: $0.lastAccess) }
            }
            guard let facts else { continue }
            checked += 1
            // A read with the counters left alone: listing is not an access.
            let counters = state.withLock { $0.counters }
            let record = try read(keyBytes: keyBytes, includingStale: false)
            state.withLock { $0.counters = counters }
            if let record {
                state.withLock { $0.records[keyBytes]?.lastAccess = facts.lastAccess }
                visit(record, facts)
            } else if state.withLock({ $0.records[keyBytes] == nil }) {
                let path = keyBytes.map { String(format: "%02x", $0) }.joined()
                issues.append(.init(path: path, reason: DiskCacheVerifyReport.Issue.expiredReason))
            }
        }
        progress?(keys.count, keys.count)
        return DiskCacheVerifyReport(checked: checked, removed: issues.map(\.path), issues: issues)
    }

    func removeExpired() throws -> Int {
        let now = self.now
        return state.withLock { state in
            // The header-only verdict (no tag versions yet), as the file engine's header sweep uses it.
            let epoch = state.epoch
            let gone = state.records.filter { _, stored in
                stored.record.header.stamp().liveness(currentEpoch: epoch, currentTagVersions: [:], at: now) == .expired
            }
            for key in gone.keys { state.records[key] = nil }
            state.counters.expirations += gone.count
            return gone.count
        }
    }

    func trim(toBytes bytes: Int?, toCount count: Int?) throws -> Int {
        trim(toBytes: bytes, toCount: count, sparing: nil)
    }

    func applyLimits() throws {
        try enforceLimits(sparing: nil)
    }

    func lowWater(_ limit: Int) -> Int {
        StoreAccounting.Limits.lowWater(limit, configuration.lowWaterFraction)
    }

    private func enforceLimits(sparing spared: Data?) throws {
        let (count, bytes) = totals()
        let overBytes = configuration.byteLimit.map { bytes > $0 } ?? false
        let overCount = configuration.countLimit.map { count > $0 } ?? false
        guard overBytes || overCount else { return }
        _ = trim(
            toBytes: configuration.byteLimit.map(lowWater), toCount: configuration.countLimit.map(lowWater),
            sparing: spared)
    }

    /// Removes least recently used records (oldest access first, then key bytes, so ties are ordered)
    /// until within `bytes` and `count`, never `spared`.
    private func trim(toBytes bytes: Int?, toCount count: Int?, sparing spared: Data?) -> Int {
        state.withLock { state in
            var held = state.records.count
            var total = state.records.values.reduce(0) { $0 + $1.size }
            let victims = state.records.filter { $0.key != spared }.sorted { first, second in
                guard first.value.lastAccess == second.value.lastAccess else {
                    return first.value.lastAccess < second.value.lastAccess
                }
                return first.key.lexicographicallyPrecedes(second.key)
            }
            var removed = 0
            for (key, stored) in victims {
                guard (bytes.map { total > $0 } ?? false) || (count.map { held > $0 } ?? false) else { break }
                state.records[key] = nil
                held -= 1
                total -= stored.size
                removed += 1
            }
            state.counters.evictions += removed
            return removed
        }
    }

    // MARK: - Totals and statistics

    func totals() -> (count: Int, bytes: Int) {
        state.withLock { state in (state.records.count, state.records.values.reduce(0) { $0 + $1.size }) }
    }

    func statistics() -> CacheStatistics {
        let total = state.withLock { $0.counters }
        return CacheStatistics(
            hits: total.hits, misses: total.misses, insertions: total.insertions, evictions: total.evictions,
            expirations: total.expirations, corruptEntriesRemoved: total.corruptEntriesRemoved,
            errors: total.readFailures)
    }

    func flushStatistics() throws {}

    // MARK: - Tags

    func tagVersions(of tags: Set<String>) throws -> [String: UInt64] {
        state.withLock { state in
            // A stamp is taken only from a counter that exists: a missing one is created at a fresh base.
            for tag in tags where state.tagVersions[tag] == nil { state.tagVersions[tag] = FenceCounter.freshBase() }
            return state.tagVersions.filter { tags.contains($0.key) }
        }
    }

    func advanceTagVersion(of tag: String) throws {
        state.withLock { $0.tagVersions[tag] = FenceCounter.advanced(from: $0.tagVersions[tag]) }
    }

    // MARK: - Coordination

    var isReadOnly: Bool { false }

    func withKeyLock<R>(keyBytes: Data, wait: Bool, _ body: () throws -> R) throws -> R? {
        // Enough for tests on one thread: a held key is refused rather than waited for.
        let taken = keyLocks.withLock { locks -> Bool in
            guard locks[keyBytes] == nil else { return false }
            locks[keyBytes] = 1
            return true
        }
        guard taken else {
            if wait { throw CacheError(.io, "the in-memory engine does not wait for a key's lock") }
            return nil
        }
        defer { keyLocks.withLock { $0[keyBytes] = nil } }
        return try body()
    }

    func deferringEvents<T>(_ body: () throws -> T) rethrows -> T {
        try events.holding(body)
    }

    func report(_ kind: CacheEvent.Kind, _ message: String, path: String?, error: (any Error)?) {
        events.deliver(CacheEvent(kind, "in-memory store: \(message)", path: path, error: error))
    }
}

import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What the store knows of itself in memory: the size and recency index of the entry files, the
/// statistics counters not yet merged into `store.stats`, and the bookkeeping that keeps the index right
/// while folder scans run outside the lock. No I/O: the store scans and removes files, and tells this
/// type what it found and did.
///
/// Keeping the index right while scans run: a scan takes milliseconds to seconds, and writes, hits and
/// removals of this process go on meanwhile. Every change made while a scan is in flight is also
/// journaled and replayed onto the scan's result when it is installed, so the index never loses a change
/// the scan missed. A wipe or an epoch change bumps the scan generation, and a scan begun before it is
/// discarded instead of installing files that are gone.
///
/// Thread safety: every member takes the one lock of this type, briefly, and runs no I/O and no callback
/// under it. A file change and its index update are kept together by the store's name stripes
/// (DiskStore+NameLocks.swift), which are taken before this lock, never under it.
final class StoreAccounting: Sendable {
    struct State {
        /// `nil` until an operation needs sizes or recency (see `DiskStore.ensureIndex()`).
        var index: StoreIndex?
        /// Counts not yet merged into `store.stats`.
        var pending = StatisticsCounters()
        /// Folder scans in flight, the index changes made since the first of them began, and a counter
        /// that invalidates them.
        var activeScans = 0
        var journal: [IndexChange] = []
        var generation = 0
    }

    enum IndexChange {
        case record(String, size: Int, lastAccess: Date)
        case remove(String)
    }

    private let state = Locked(State())

    /// Runs `body` with the accounting state locked; for tests and for reads of several fields at once.
    func withState<T>(_ body: (inout State) -> T) -> T {
        state.withLock { body(&$0) }
    }

    // MARK: - Changes

    /// Records a write of `name` that just put its file in place, counted as an insertion.
    func recordInsertion(_ name: String, size: Int, lastAccess: Date) {
        state.withLock {
            $0.indexRecord(name, size: size, lastAccess: lastAccess)
            $0.pending.insertions += 1
        }
    }

    /// Records a hit: recency only. A hit never adds the name or sets its size, so a removal or a newer
    /// write that ran since the file was opened (each updating the index itself) is never undone.
    func recordHit(_ name: String, lastAccess: Date) {
        state.withLock {
            $0.index?.touch(name, lastAccess: lastAccess)
            $0.pending.hits += 1
        }
    }

    /// Records the removal of the entry file `name`.
    func recordRemoval(_ name: String) {
        state.withLock { $0.indexRemove(name) }
    }

    /// Updates the pending statistics counters.
    func count(_ update: (inout StatisticsCounters) -> Void) {
        state.withLock { update(&$0.pending) }
    }

    /// The counters not yet merged into `store.stats`.
    var pending: StatisticsCounters { state.withLock { $0.pending } }

    /// Takes `merged` off the pending counters once a flush wrote them (counts made meanwhile stay).
    func subtractPending(_ merged: StatisticsCounters) {
        state.withLock { $0.pending = $0.pending - merged }
    }

    /// Replaces the index (`nil` to rebuild it on next need) and discards scans in flight.
    func resetIndex(to replacement: StoreIndex?) {
        state.withLock { $0.resetIndex(to: replacement) }
    }

    // MARK: - Scans

    /// Starts journaling for a scan; returns the generation to pass to
    /// ``finishScan(_:generation:onlyIfMissing:)``.
    func beginScan() -> Int {
        state.withLock { $0.beginScan() }
    }

    /// ``beginScan()`` when there is no index yet; `nil` when there is one (no scan is needed).
    func beginScanIfMissing() -> Int? {
        state.withLock { $0.index == nil ? $0.beginScan() : nil }
    }

    /// Ends a scan that failed.
    func endScan() {
        state.withLock { $0.endScan() }
    }

    /// Installs a scan's result (see ``State/finishScan(_:generation:onlyIfMissing:)``).
    ///
    /// - Returns: The index now in place when it reflects this scan, else `nil`.
    @discardableResult
    func finishScan(
        _ scan: [String: (size: Int, modified: Date)], generation: Int, onlyIfMissing: Bool
    ) -> StoreIndex? {
        state.withLock { state in
            guard state.finishScan(scan, generation: generation, onlyIfMissing: onlyIfMissing) else { return nil }
            return state.index
        }
    }

    // MARK: - Totals and limits

    /// The index's entry count and bytes, zero while there is no index.
    var totals: (count: Int, bytes: Int) {
        state.withLock { ($0.index?.count ?? 0, $0.index?.totalBytes ?? 0) }
    }

    /// Whether the index holds more than `limits` allow (`false` while there is no index).
    func exceeds(_ limits: Limits) -> Bool {
        state.withLock { state in
            guard let index = state.index else { return false }
            return limits.areExceeded(count: index.count, bytes: index.totalBytes)
        }
    }

    /// A byte and an entry limit, either absent; the decisions of trimming, as pure functions.
    struct Limits {
        var bytes: Int?
        var count: Int?

        var isEmpty: Bool { bytes == nil && count == nil }

        /// Whether `count` entries of `bytes` bytes in all are over either limit.
        func areExceeded(count: Int, bytes: Int) -> Bool {
            bytes > (self.bytes ?? .max) || count > (self.count ?? .max)
        }

        /// The limits a trim after an overflow aims at: `fraction` of each, rounded down, so one write over
        /// the limit does not start a trim per write.
        func lowWater(_ fraction: Double) -> Limits {
            Limits(bytes: bytes.map { Self.lowWater($0, fraction) }, count: count.map { Self.lowWater($0, fraction) })
        }

        static func lowWater(_ limit: Int, _ fraction: Double) -> Int {
            Int((Double(limit) * fraction).rounded(.down))
        }
    }
}

extension StoreAccounting.State {
    /// Records a write or a hit of `name`.
    mutating func indexRecord(_ name: String, size: Int, lastAccess: Date) {
        index?.record(name, size: size, lastAccess: lastAccess)
        if activeScans > 0 { journal.append(.record(name, size: size, lastAccess: lastAccess)) }
    }

    /// Records the removal of `name`.
    mutating func indexRemove(_ name: String) {
        index?.remove(name)
        if activeScans > 0 { journal.append(.remove(name)) }
    }

    /// Starts journaling for a scan; returns the generation to pass to `finishScan`.
    mutating func beginScan() -> Int {
        activeScans += 1
        return generation
    }

    /// Installs a scan's result (replaying the changes made since) unless the index was dropped or
    /// replaced by a wipe meanwhile, or, with `onlyIfMissing`, another scan installed one first.
    ///
    /// - Returns: Whether the index now reflects this scan.
    @discardableResult
    mutating func finishScan(
        _ scan: [String: (size: Int, modified: Date)], generation started: Int, onlyIfMissing: Bool
    ) -> Bool {
        defer { endScan() }
        guard started == generation, !(onlyIfMissing && index != nil) else { return false }
        var fresh = index ?? StoreIndex()
        fresh.replace(with: scan)
        for change in journal {
            switch change {
            case .record(let name, let size, let lastAccess): fresh.record(name, size: size, lastAccess: lastAccess)
            case .remove(let name): fresh.remove(name)
            }
        }
        index = fresh
        return true
    }

    /// Ends a scan that failed.
    mutating func endScan() {
        activeScans -= 1
        if activeScans == 0 { journal.removeAll() }
    }

    /// Replaces the index (`nil` to rebuild it on next need) and discards scans in flight.
    mutating func resetIndex(to replacement: StoreIndex?) {
        index = replacement
        generation += 1
    }
}

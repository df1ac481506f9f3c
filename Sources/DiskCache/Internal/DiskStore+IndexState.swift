import Foundation

// Keeping the index right while folder scans run outside the lock: a scan takes milliseconds to seconds,
// and writes, hits and removals of this process go on meanwhile. Every change made while a scan is in
// flight is also journaled and replayed onto the scan's result when it is installed, so the index never
// loses a change the scan missed. A wipe or an epoch change bumps `generation`, and a scan begun before
// it is discarded instead of installing files that are gone.
extension DiskStore.State {
    enum IndexChange {
        case record(String, size: Int, lastAccess: Date)
        case remove(String)
    }

    /// Records a write or a hit of `name`. Call with the lock held.
    mutating func indexRecord(_ name: String, size: Int, lastAccess: Date) {
        index?.record(name, size: size, lastAccess: lastAccess)
        if activeScans > 0 { journal.append(.record(name, size: size, lastAccess: lastAccess)) }
    }

    /// Records the removal of `name`. Call with the lock held.
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

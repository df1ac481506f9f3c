#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The in-memory size and recency index of the entry files, built lazily from one scan of the folder.
///
/// Recency is the file's modification time, which the store keeps itself (to the second) on writes and
/// hits; a per-process tick breaks ties between accesses the times cannot tell apart (a manual clock, a
/// coarse timer, accesses within the recency step). Not thread-safe: lives inside the store's `Locked` state.
struct StoreIndex {
    struct Item {
        var size: Int
        var lastAccess: Date
        var tick: UInt64
    }

    private(set) var items: [String: Item] = [:]
    private(set) var totalBytes = 0
    private var nextTick: UInt64 = 1

    var count: Int { items.count }

    /// Records a write or a hit.
    mutating func record(_ name: String, size: Int, lastAccess: Date) {
        if let old = items[name] { totalBytes -= old.size }
        items[name] = Item(size: size, lastAccess: lastAccess, tick: nextTick)
        nextTick += 1
        totalBytes += size
    }

    /// Records a hit on an entry the index knows; an unknown one is left for the next scan.
    mutating func touch(_ name: String, lastAccess: Date) {
        guard var item = items[name] else { return }
        item.lastAccess = lastAccess
        item.tick = nextTick
        nextTick += 1
        items[name] = item
    }

    mutating func remove(_ name: String) {
        if let old = items.removeValue(forKey: name) { totalBytes -= old.size }
    }

    /// Replaces the contents with a fresh scan, keeping this process's tie-breaking ticks for entries
    /// whose modification time has not changed since.
    mutating func replace(with scan: [String: (size: Int, modified: Date)]) {
        var fresh: [String: Item] = [:]
        fresh.reserveCapacity(scan.count)
        var bytes = 0
        for (name, file) in scan {
            let tick = items[name].flatMap { $0.lastAccess == file.modified ? $0.tick : nil } ?? 0
            fresh[name] = Item(size: file.size, lastAccess: file.modified, tick: tick)
            bytes += file.size
        }
        items = fresh
        totalBytes = bytes
    }

    /// Entry names, least recently used first.
    ///
    /// - Complexity: O(n log n).
    func leastRecentlyUsedFirst() -> [String] {
        items.sorted { lhs, rhs in
            if lhs.value.lastAccess != rhs.value.lastAccess { return lhs.value.lastAccess < rhs.value.lastAccess }
            if lhs.value.tick != rhs.value.tick { return lhs.value.tick < rhs.value.tick }
            return lhs.key < rhs.key
        }.map(\.key)
    }
}

import CacheCore

#if canImport(Darwin)
import Dispatch
#endif

/// How hard the system is asking processes to give memory back.
enum MemoryPressureLevel: Sendable, CaseIterable {
    /// Memory is getting short: each shard keeps ``MemoryPressureMonitor/warningFraction`` of its entries.
    case warning
    /// Memory is nearly gone: every entry is dropped.
    case critical
}

/// Trims a cache's shards when the system reports memory pressure: on a warning each shard to half its
/// entries (the least recently used half goes), on a critical event to nothing. Trimmed entries count as
/// evictions.
///
/// On Apple platforms one dispatch source per pressure level calls ``trim(_:for:)``, so a handler knows its
/// level without reading the source's data and captures nothing but the shards: the cache can be released
/// while a source lives, and no source retains itself. The sources are cancelled when the monitor, owned by
/// the cache, is released. Linux has no system memory-pressure source (`DispatchSource.makeMemoryPressureSource`
/// does not exist there), so callers trim with `MemoryCache.trim(toCount:)` or `trim(toCost:)`; the same
/// ``trim(_:for:)`` runs in the tests there, so the policy is tested on every platform.
final class MemoryPressureMonitor: Sendable {
    /// The share of its entries each shard keeps on a warning: one half, rounded down.
    static let warningFraction = (numerator: 1, denominator: 2)

    #if canImport(Darwin)
    // `any DispatchSourceMemoryPressure` is not `Sendable`; the array is set once in `init` and only read
    // again in `deinit` (to cancel), and dispatch sources may be used from any thread.
    private nonisolated(unsafe) let sources: [any DispatchSourceMemoryPressure]
    #endif

    init<Key: Hashable, Value>(shards: [Locked<ShardTable<Key, Value>>]) {
        #if canImport(Darwin)
        let levels: [(event: DispatchSource.MemoryPressureEvent, level: MemoryPressureLevel)] = [
            (.warning, .warning), (.critical, .critical),
        ]
        sources = levels.map { entry in
            let source = DispatchSource.makeMemoryPressureSource(eventMask: entry.event, queue: .global(qos: .utility))
            let level = entry.level
            source.setEventHandler {
                Self.trim(shards, for: level)
            }
            source.activate()
            return source
        }
        #endif
    }

    deinit {
        #if canImport(Darwin)
        for source in sources { source.cancel() }
        #endif
    }

    /// Trims every shard for `level`: the entry point the dispatch sources call.
    ///
    /// - Complexity: O(*n*) in the entries removed; each shard's lock is held for its own trim only, and the
    ///   removed values are released after it is dropped.
    static func trim<Key: Hashable, Value>(_ shards: [Locked<ShardTable<Key, Value>>], for level: MemoryPressureLevel) {
        for shard in shards {
            var released = ShardTable<Key, Value>.Released()
            shard.withLock { table in
                let kept: Int
                switch level {
                case .warning: kept = table.count * warningFraction.numerator / warningFraction.denominator
                case .critical: kept = 0
                }
                table.trim(toCount: kept, into: &released)
            }
            // Values are released here, after the lock is dropped.
            withExtendedLifetime(released) {}
        }
    }
}

extension MemoryCache {
    /// Trims exactly as the system's memory-pressure source does for `level`; internal, so that the policy is
    /// tested on Linux, which has no such source.
    func respondToMemoryPressure(_ level: MemoryPressureLevel) {
        MemoryPressureMonitor.trim(shards, for: level)
    }
}

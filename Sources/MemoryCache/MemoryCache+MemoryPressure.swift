import CacheCore

#if canImport(Darwin)
import Dispatch

/// Trims a cache's shards when the system reports memory pressure: each shard to half its entries on a
/// warning, to nothing on a critical event. Trimmed entries count as evictions.
///
/// One dispatch source per pressure level, so a handler knows its level without reading the source's
/// data and captures nothing but the shards: the cache can be released while a source lives, and no
/// source retains itself. The sources are cancelled when the monitor, owned by the cache, is released.
final class MemoryPressureMonitor: @unchecked Sendable {
    // @unchecked Sendable is sound: `sources` is set once in `init` and only cancelled in `deinit`;
    // dispatch sources may be used from any thread.
    private let sources: [any DispatchSourceMemoryPressure]

    init<Key: Hashable, Value>(shards: [Locked<LRUTable<Key, Value>>]) {
        let levels: [(event: DispatchSource.MemoryPressureEvent, isCritical: Bool)] = [
            (.warning, false), (.critical, true),
        ]
        sources = levels.map { level in
            let source = DispatchSource.makeMemoryPressureSource(eventMask: level.event, queue: .global(qos: .utility))
            let isCritical = level.isCritical
            source.setEventHandler {
                Self.trim(shards, toNothing: isCritical)
            }
            source.activate()
            return source
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }

    private static func trim<Key: Hashable, Value>(_ shards: [Locked<LRUTable<Key, Value>>], toNothing: Bool) {
        for shard in shards {
            var released = LRUTable<Key, Value>.Released()
            shard.withLock { table in
                table.trim(toCount: toNothing ? 0 : table.count / 2, into: &released)
            }
            // Values are released here, after the lock is dropped.
            withExtendedLifetime(released) {}
        }
    }
}
#else
/// A stand-in: Linux has no system memory-pressure source (`DispatchSource.makeMemoryPressureSource`
/// does not exist there), so callers trim with `MemoryCache.trim(toCount:)` or `trim(toCost:)`.
final class MemoryPressureMonitor: Sendable {
    init<Key: Hashable, Value>(shards: [Locked<LRUTable<Key, Value>>]) {}
}
#endif  // Darwin has a memory-pressure dispatch source; Linux does not

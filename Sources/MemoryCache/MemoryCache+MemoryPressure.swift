import CacheCore

#if canImport(Darwin)
import Dispatch

/// Trims a cache's shards when the system reports memory pressure: each shard to half its entries on a
/// warning, to nothing on a critical event.
///
/// The handler holds the shards, not the cache, so the cache can be released while the source lives;
/// the source is cancelled when the monitor (owned by the cache) is released, which also frees the
/// handler.
final class MemoryPressureMonitor: @unchecked Sendable {
    // @unchecked Sendable is sound: `source` is set once in `init` and only cancelled in `deinit`;
    // dispatch sources may be used from any thread.
    private let source: any DispatchSourceMemoryPressure

    init<Key: Hashable, Value>(shards: [Locked<LRUTable<Key, Value>>]) {
        let source = DispatchSource.makeMemoryPressureSource(
            eventMask: [.warning, .critical], queue: .global(qos: .utility))
        source.setEventHandler {
            let event = source.data
            for shard in shards {
                var released = LRUTable<Key, Value>.Released()
                shard.withLock { table in
                    let keep = event.contains(.critical) ? 0 : table.count / 2
                    table.trim(toCount: keep, into: &released)
                }
                withExtendedLifetime(released) {}
            }
        }
        source.activate()
        self.source = source
    }

    deinit {
        source.cancel()
    }
}
#else
/// A stand-in: Linux has no system memory-pressure source (`DispatchSource.makeMemoryPressureSource`
/// does not exist there), so callers trim with `MemoryCache.trim(toCount:)` or `trim(toCost:)`.
final class MemoryPressureMonitor: Sendable {
    init<Key: Hashable, Value>(shards: [Locked<LRUTable<Key, Value>>]) {}
}
#endif  // Darwin has a memory-pressure dispatch source; Linux does not

import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import StrataTestSupport

@testable import MultiCache

/// A MemoryCache over an in-memory fake tier, each behind a `FaultInjectingCache`, and a MultiCache over
/// them on one manual clock: both tiers keep stale entries, so every resilient behaviour can be watched
/// tier by tier.
struct ResilientTiers {
    let clock = ManualClock()
    let fast: FaultInjectingCache<String, Data>
    let slow: FaultInjectingCache<String, Data>
    let cache: MultiCache<String, Data>
    let events = CoordinatorEventLog()

    init() throws {
        fast = FaultInjectingCache(wrapping: try MemoryCache<String, Data>(clock: clock))
        slow = FaultInjectingCache(clock: clock)
        cache = try MultiCache(tiers: [.init(fast, name: "memory"), .init(slow, name: "fake")])
        cache.coordinator.observe(events.observer)
    }

    /// What each tier holds for `key`, fresh or stale: (fast, slow).
    func held(_ key: String) async throws -> (fast: Data?, slow: Data?) {
        (try await fast.entryIncludingStale(forKey: key)?.value, try await slow.entryIncludingStale(forKey: key)?.value)
    }

    /// What each tier returns for `key` to a plain read: (fast, slow).
    func plain(_ key: String) async throws -> (fast: Data?, slow: Data?) {
        (try await fast.value(forKey: key), try await slow.value(forKey: key))
    }
}

/// A loader failure the tests throw.
struct BackendDown: Error, Equatable {}

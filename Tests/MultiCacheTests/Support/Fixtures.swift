import CacheCore
import CacheTesting
import Foundation
import MultiCache

/// Two tiers and a MultiCache over them, on one manual clock.
///
/// The tiers are `FaultInjectingCache`s, so a test can fail or hold any call of either tier.
struct TwoTiers {
    let clock: ManualClock
    let fast: FaultInjectingCache<String, Data>
    let slow: FaultInjectingCache<String, Data>
    let cache: MultiCache<String, Data>

    /// The fast tier named "memory", the slow one "disk".
    init(fastMaximumLifetime: Duration? = nil, observer: CacheObserver? = nil) throws {
        let clock = ManualClock()
        self.clock = clock
        fast = FaultInjectingCache(wrapping: makeMemoryTier(clock: clock))
        slow = FaultInjectingCache(wrapping: makeSlowTier(clock: clock))
        cache = try MultiCache(
            tiers: [
                .init(fast, name: "memory", maximumLifetime: fastMaximumLifetime),
                .init(slow, name: "disk"),
            ],
            observer: observer)
    }
}

/// The fast tier of the tests.
func makeMemoryTier(clock: ManualClock) -> any Cache<String, Data> {
    FaultInjectingCache<String, Data>(clock: clock)
}

/// The slow tier of the tests.
func makeSlowTier(clock: ManualClock) -> any Cache<String, Data> {
    FaultInjectingCache<String, Data>(clock: clock)
}

/// `text` as UTF-8 bytes.
func bytes(_ text: String) -> Data { Data(text.utf8) }

#if canImport(Darwin)
import CacheCore
#else
import Synchronization
#endif

/// A count of tier-0 hits that the hit path bumps without taking the statistics lock.
///
/// A tier-0 hit in memory is only a few hundred instructions, and a mutex round trip was a third of
/// what a `MultiCache` added to it (measured with callgrind); one relaxed atomic add is a tenth of
/// that. The count is folded into ``MultiCache/statistics`` and ``MultiCache/tierStatistics`` when a snapshot is taken. On Darwin the
/// package's deployment targets predate `Synchronization.Atomic`, so a lock stands in there.
///
/// Thread-safe: `increment()`, `increment(by:)` and `load()` may run on any thread at once.
struct HitCounter: ~Copyable, Sendable {
    #if canImport(Darwin)
    private let count = Locked<Int>(0)

    func increment() { count.withLock { $0 += 1 } }

    func increment(by amount: Int) { count.withLock { $0 += amount } }

    func load() -> Int { count.withLock { $0 } }
    #else
    private let count = Atomic<Int>(0)

    func increment() {
        // Relaxed: the count orders nothing else; a snapshot only needs each increment counted once.
        count.wrappingAdd(1, ordering: .relaxed)
    }

    func increment(by amount: Int) {
        count.wrappingAdd(amount, ordering: .relaxed)
    }

    func load() -> Int { count.load(ordering: .relaxed) }
    #endif
}

import CacheCore
import CacheTesting
import MemoryCache
import StrataTestSupport
import Testing

@testable import MultiCache

/// Loads wait for a publishing tier's start (its first `.all` applied), so that `.all` does not fence them;
/// hits do not wait.
@Suite(.timeLimit(.minutes(10)))
struct MultiCacheInvalidationStartTests {
    @Test func aLoadMissedBeforeTheStartRunsAfterTheFirstFlushAndIsStored() async throws {
        // Given a cache whose publishing tier has not started, and a hit above it
        let top = try MemoryCache<String, Int>()
        let starting = StartingTier<Int>(clock: ManualClock())
        let cache = try MultiCache<String, Int>([top, starting])
        let applied = AppliedInvalidations()
        cache.observeAppliedInvalidations { applied.record($0) }
        try top.setValue(7, forKey: "held")
        let loads = Counter()

        // When a miss asks to load before the start
        let started = Gate()
        let load = Task {
            try await cache.value(forKey: "k", expiry: .never) {
                loads.increment()
                started.open()
                return 1
            }
        }

        // Then hits are served meanwhile, and the loader has not run
        #expect(try await cache.value(forKey: "held", expiry: .never) { 0 } == 7)
        #expect(loads.value == 0)

        // When the tier starts: its `.all` is applied first, then the load runs and is stored
        starting.start()
        try await started.wait()
        #expect(try await load.value == 1)
        await applied.wait(forCount: 1)
        #expect(applied.events == [.all])
        #expect(top.value(forKey: "k") == 1)
        #expect(try await starting.publishing.storage.value(forKey: "k") == 1)
        #expect(try await cache.value(forKey: "k", expiry: .never) { 2 } == 1)
        #expect(loads.value == 1)
    }

    @Test func aFailedStartLetsLoadsGoOnWithoutAFlush() async throws {
        let starting = StartingTier<Int>(clock: ManualClock())
        let cache = try MultiCache<String, Int>([MemoryCache<String, Int>(), starting])
        let load = Task { try await cache.value(forKey: "k", expiry: .never) { 1 } }

        starting.start(publishing: false)

        #expect(try await load.value == 1)
        #expect(try await starting.publishing.storage.value(forKey: "k") == 1)
    }

    @Test func aTierStartedBeforeTheCacheHoldsNothing() async throws {
        let starting = StartingTier<Int>(clock: ManualClock())
        starting.start(publishing: false)
        let cache = try MultiCache<String, Int>([MemoryCache<String, Int>(), starting])

        #expect(try await cache.value(forKey: "k", expiry: .never) { 1 } == 1)
        #expect(try await starting.publishing.storage.value(forKey: "k") == 1)
    }
}

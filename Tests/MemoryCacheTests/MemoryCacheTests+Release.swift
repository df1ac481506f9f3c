import CacheCore
import CacheTesting
import Foundation
import Testing

@testable import MemoryCache

/// A value whose `deinit` calls back into the cache that held it. If the cache released values while
/// holding its (non-recursive) lock, the callback would deadlock.
final class ReentrantValue: Sendable {
    let onDeinit: @Sendable () -> Void

    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }

    deinit { onDeinit() }
}

extension MemoryCacheTests {
    enum Departure: String, CaseIterable, Sendable {
        case replaced, evicted, removed, removedAll, trimmed, expiredOnRead, purged
    }

    @Test(arguments: Departure.allCases)
    func valuesLeavingTheCacheAreReleasedOutsideTheLock(_ departure: Departure) throws {
        // Given a cached value whose deinit reads the cache
        let clock = ManualClock()
        let cache = try MemoryCache<Int, ReentrantValue>(countLimit: 1, clock: clock)
        let countsSeenInDeinit = Locked<[Int]>([])
        try cache.setValue(
            ReentrantValue { [weak cache] in
                let count = cache?.count ?? -1
                countsSeenInDeinit.withLock { $0.append(count) }
            },
            forKey: 1, expiry: .seconds(10))
        // When it leaves the cache
        switch departure {
        case .replaced: try cache.setValue(ReentrantValue {}, forKey: 1)
        case .evicted: try cache.setValue(ReentrantValue {}, forKey: 2)
        case .removed: cache.removeValue(forKey: 1)
        case .removedAll: cache.removeAll()
        case .trimmed: cache.trim(toCount: 0)
        case .expiredOnRead:
            clock.advance(by: 10)
            #expect(cache[1] == nil)
        case .purged:
            clock.advance(by: 10)
            #expect(cache.removeExpired() == 1)
        }
        // Then its deinit ran, and could use the cache, after the operation released the lock
        let expectedCount = [.replaced, .evicted].contains(departure) ? 1 : 0
        #expect(countsSeenInDeinit.value == [expectedCount])
    }
}

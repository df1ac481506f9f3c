import CacheCore
import Testing

@Suite struct CacheStatisticsTests {
    @Test func startsAtZero() {
        let statistics = CacheStatistics()
        #expect(statistics.hits == 0)
        #expect(statistics.misses == 0)
        #expect(statistics.insertions == 0)
        #expect(statistics.evictions == 0)
        #expect(statistics.expirations == 0)
        #expect(statistics.corruptEntriesRemoved == 0)
        #expect(statistics.errors == 0)
        #expect(statistics.loads == 0)
        #expect(statistics.loadsShared == 0)
    }

    @Test(arguments: [(0, 0, 0.0), (3, 1, 0.75), (0, 5, 0.0), (5, 0, 1.0), (1, 2, 1.0 / 3.0)])
    func hitRatioIsHitsOverReads(_ hits: Int, _ misses: Int, _ expected: Double) {
        #expect(CacheStatistics(hits: hits, misses: misses).hitRatio == expected)
    }

    @Test func hitRatioIgnoresCountersOtherThanReads() {
        let statistics = CacheStatistics(hits: 1, misses: 1, insertions: 50, evictions: 7, errors: 3, loads: 99)
        #expect(statistics.hitRatio == 0.5)
    }

    @Test func snapshotsCompareByEveryCounter() {
        #expect(CacheStatistics(hits: 1) == CacheStatistics(hits: 1))
        #expect(CacheStatistics(hits: 1) != CacheStatistics(misses: 1))
        #expect(CacheStatistics(loadsShared: 1) != CacheStatistics())
    }
}

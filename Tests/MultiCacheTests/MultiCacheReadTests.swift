import CacheCore
import CacheTesting
import Foundation
import MultiCache
import Testing

@Suite struct MultiCacheReadTests {
    @Test func hitInSlowTierIsReturnedAndWrittenBackIntoFastTier() async throws {
        // Given a value only in the slow tier
        let tiers = try TwoTiers()
        try await tiers.slow.setValue(bytes("photo"), forKey: "k", expiry: .never)

        // When the MultiCache reads it
        let value = try await tiers.cache.value(forKey: "k")

        // Then it is returned, and the fast tier holds it as soon as the read has returned
        #expect(value == bytes("photo"))
        #expect(try await tiers.fast.value(forKey: "k") == bytes("photo"))
        let tierStatistics = tiers.cache.tierStatistics
        #expect(tierStatistics.map(\.misses) == [1, 0])
        #expect(tierStatistics.map(\.hits) == [0, 1])
        #expect(tierStatistics.map(\.writeBacks) == [1, 0])
        let statistics = tiers.cache.statistics
        #expect(statistics.hits == 1 && statistics.misses == 0)
        // And a second read is answered by the fast tier alone
        #expect(try await tiers.cache.value(forKey: "k") == bytes("photo"))
        #expect(tiers.slow.callCount(.entry) == 1)
    }

    @Test func readAfterEarlierWritesAndRemovalsStillWritesBack() async throws {
        // Given a MultiCache that has already written and removed (each advances the change sequence a read
        // remembers without a lock), and then a value only in the slow tier
        let tiers = try TwoTiers()
        try await tiers.cache.setValue(bytes("old"), forKey: "k", expiry: .never)
        try await tiers.cache.removeEntry(forKey: "k")
        try await tiers.cache.removeAll()
        try await tiers.slow.setValue(bytes("v"), forKey: "k", expiry: .never)

        // When the MultiCache reads it
        let value = try await tiers.cache.value(forKey: "k")

        // Then the read saw the current sequence, so its write-back was not taken for a fenced one
        #expect(value == bytes("v"))
        #expect(try await tiers.fast.value(forKey: "k") == bytes("v"))
        #expect(tiers.cache.tierStatistics.map(\.writeBacks) == [1, 0])
    }

    @Test func missInEveryTierIsNil() async throws {
        let tiers = try TwoTiers()
        #expect(try await tiers.cache.entry(forKey: "absent") == nil)
        let statistics = tiers.cache.statistics
        let tierStatistics = tiers.cache.tierStatistics
        #expect(tierStatistics.map(\.misses) == [1, 1])
        #expect(statistics.misses == 1)
        #expect(statistics.hitRatio == 0)
    }

    @Test func overallHitRatioCountsReadsOfTheWholeCache() async throws {
        let tiers = try TwoTiers()
        try await tiers.slow.setValue(bytes("v"), forKey: "k", expiry: .never)
        _ = try await tiers.cache.value(forKey: "k")  // hit in tier 1
        _ = try await tiers.cache.value(forKey: "k")  // hit in tier 0
        _ = try await tiers.cache.value(forKey: "absent")  // miss
        let statistics = tiers.cache.statistics
        let tierStatistics = tiers.cache.tierStatistics
        #expect(statistics.hits == 2 && statistics.misses == 1)
        #expect(statistics.hitRatio == 2.0 / 3.0)
        #expect(tierStatistics.map(\.hits) == [1, 1])
        #expect(tierStatistics.map(\.misses) == [2, 1])
        #expect(tierStatistics.map(\.name) == ["memory", "disk"])
    }

    @Test func writeBackKeepsRemainingLifetimeNotAFreshTTL() async throws {
        // Given an entry with a 10 s TTL written at t=0 into the slow tier only
        let tiers = try TwoTiers()
        let start = tiers.clock.now
        try await tiers.slow.setValue(bytes("v"), forKey: "k", expiry: .seconds(10))

        // When it is read through the MultiCache at t=8
        tiers.clock.advance(by: 8)
        #expect(try await tiers.cache.value(forKey: "k") == bytes("v"))

        // Then the fast copy expires at t=10, like the original
        #expect(try await tiers.fast.entry(forKey: "k")?.expiresAt == start.addingTimeInterval(10))
        tiers.clock.advance(by: 1)  // t=9
        #expect(try await tiers.fast.value(forKey: "k") == bytes("v"))
        tiers.clock.advance(by: 1.5)  // t=10.5
        #expect(try await tiers.fast.value(forKey: "k") == nil)
        #expect(try await tiers.slow.value(forKey: "k") == nil)
        #expect(try await tiers.cache.value(forKey: "k") == nil)
    }

    @Test func fastTierMaximumLifetimeCapsTheWrittenBackCopy() async throws {
        // Given a fast tier that keeps copies at most 1 s, and a 10 s entry in the slow tier
        let tiers = try TwoTiers(fastMaximumLifetime: .seconds(1))
        let start = tiers.clock.now
        try await tiers.slow.setValue(bytes("v"), forKey: "k", expiry: .seconds(10))

        // When it is read at t=8
        tiers.clock.advance(by: 8)
        #expect(try await tiers.cache.value(forKey: "k") == bytes("v"))

        // Then the fast copy expires at t=9 (the earlier of t=10 and t=8+1), the slow entry at t=10
        #expect(try await tiers.fast.entry(forKey: "k")?.expiresAt == start.addingTimeInterval(9))
        tiers.clock.advance(by: 0.999)
        #expect(try await tiers.fast.value(forKey: "k") == bytes("v"))
        tiers.clock.advance(by: 0.001)  // t=9
        #expect(try await tiers.fast.value(forKey: "k") == nil)
        #expect(try await tiers.slow.value(forKey: "k") == bytes("v"))
        // And the next read copies it again, expiring at t=10 (the entry's expiry, and t=9 plus 1 s)
        #expect(try await tiers.cache.value(forKey: "k") == bytes("v"))
        #expect(try await tiers.fast.entry(forKey: "k")?.expiresAt == start.addingTimeInterval(10))
    }

    @Test func maximumLifetimeAlsoCapsDirectWrites() async throws {
        let tiers = try TwoTiers(fastMaximumLifetime: .seconds(60))
        let start = tiers.clock.now
        try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .never)
        #expect(try await tiers.fast.entry(forKey: "k")?.expiresAt == start.addingTimeInterval(60))
        #expect(try await tiers.slow.entry(forKey: "k")?.expiresAt == nil)
    }

    @Test func writeBackCarriesTheEntryCost() async throws {
        let tiers = try TwoTiers()
        try await tiers.slow.setEntry(CacheEntry(value: bytes("v"), expiresAt: nil, cost: 42), forKey: "k")
        _ = try await tiers.cache.entry(forKey: "k")
        #expect(try await tiers.fast.entry(forKey: "k")?.cost == 42)
    }

    @Test func emptyDataIsAHitOnReadAndWriteBack() async throws {
        let tiers = try TwoTiers()
        try await tiers.slow.setValue(Data(), forKey: "empty", expiry: .never)
        let first = try await tiers.cache.value(forKey: "empty")
        #expect(first == Data())
        #expect(try await tiers.fast.value(forKey: "empty") == Data())
        #expect(tiers.cache.statistics.hits == 1)
        // A direct write of an empty value reads back as a hit too
        try await tiers.cache.setValue(Data(), forKey: "empty2", expiry: .never)
        #expect(try await tiers.cache.value(forKey: "empty2") == Data())
        #expect(tiers.cache.statistics.misses == 0)
    }

    @Test func tierThatThrowsOnReadIsSkippedCountedAndReported() async throws {
        // Given a fast tier whose reads fail, and the value in the slow tier
        let events = EventLog()
        let tiers = try TwoTiers(observer: events.observer)
        try await tiers.slow.setValue(bytes("v"), forKey: "k", expiry: .never)
        tiers.fast.failAlways(.entry)

        // When the MultiCache reads
        let value = try await tiers.cache.value(forKey: "k")

        // Then the slow tier answers, the failure is counted and reported with the tier index
        #expect(value == bytes("v"))
        #expect(tiers.cache.tierStatistics.map(\.errors) == [1, 0])
        let failures = events.all.filter { $0.kind == .tierReadFailed }
        #expect(failures.count == 1)
        #expect(failures.first?.tierIndex == 0)
        // And the write-back into the failing tier still happened (only its reads fail)
        tiers.fast.stopFailing(.entry)
        #expect(try await tiers.fast.value(forKey: "k") == bytes("v"))
    }

    @Test func readThrowsOnlyWhenEveryTierThrows() async throws {
        let tiers = try TwoTiers()
        tiers.fast.failAlways(.entry)
        tiers.slow.failAlways(.entry, with: CacheError(.permissionDenied, "no access"))
        do {
            _ = try await tiers.cache.value(forKey: "k")
            Issue.record("expected a tierFailure error")
        } catch let error as CacheError {
            #expect(error.code == .tierFailure)
            #expect(error.tierFailures.map(\.index) == [0, 1])
            #expect(error.tierFailures.map(\.name) == ["memory", "disk"])
            #expect((error.tierFailures.last?.error as? CacheError)?.code == .permissionDenied)
        }
        // One failing tier and one miss is a miss, not an error
        tiers.slow.stopFailing(.entry)
        #expect(try await tiers.cache.value(forKey: "k") == nil)
    }

    @Test func writeBackFailureIsReportedAndTheReadStillSucceeds() async throws {
        let events = EventLog()
        let tiers = try TwoTiers(observer: events.observer)
        try await tiers.slow.setValue(bytes("v"), forKey: "k", expiry: .never)
        tiers.fast.failNext(.setEntry)
        #expect(try await tiers.cache.value(forKey: "k") == bytes("v"))
        #expect(events.all.map(\.kind) == [.writeBackFailed])
        #expect(events.all.first?.tierIndex == 0)
        #expect(tiers.cache.tierStatistics.map(\.writeBacks) == [0, 0])
        #expect(tiers.cache.tierStatistics.map(\.errors) == [1, 0])
    }

    @Test func nestedMultiCacheWritesBackAtEveryLevel() async throws {
        // Given outer = [memory A, inner = [memory B, slow]] with the value only in the slow tier
        let clock = ManualClock()
        let outerMemory = try makeMemoryTier(clock: clock)
        let innerMemory = try makeMemoryTier(clock: clock)
        let slow = try makeSlowTier(clock: clock)
        let inner = try MultiCache<String, Data>([innerMemory, slow])
        let outer = try MultiCache<String, Data>(tiers: [.init(outerMemory, name: "A"), .init(inner, name: "inner")])
        try await slow.setValue(bytes("deep"), forKey: "k", expiry: .seconds(30))

        // When the outer cache reads it
        #expect(try await outer.value(forKey: "k") == bytes("deep"))

        // Then both memory tiers hold it with the original expiry
        let expected = clock.now.addingTimeInterval(30)
        #expect(try await innerMemory.entry(forKey: "k")?.expiresAt == expected)
        #expect(try await outerMemory.entry(forKey: "k")?.expiresAt == expected)
        // And writes and removals reach every level
        try await outer.removeEntry(forKey: "k")
        #expect(try await slow.value(forKey: "k") == nil)
        #expect(try await innerMemory.value(forKey: "k") == nil)
    }

    @Test func emptyTierListIsRejected() {
        #expect {
            _ = try MultiCache<String, Data>([])
        } throws: { error in
            (error as? CacheError)?.code == .invalidArgument
        }
    }

    @Test(arguments: [Duration.zero, .seconds(-1)])
    func nonPositiveMaximumLifetimeIsRejected(_ lifetime: Duration) {
        let clock = ManualClock()
        #expect {
            _ = try MultiCache<String, Data>(tiers: [.init(try makeMemoryTier(clock: clock), maximumLifetime: lifetime)]
            )
        } throws: { error in
            (error as? CacheError)?.code == .invalidArgument
        }
    }

    @Test func clockIsTheFirstTiersUnlessGiven() async throws {
        let first = ManualClock(start: Date(timeIntervalSince1970: 100))
        let second = ManualClock(start: Date(timeIntervalSince1970: 200))
        let own = ManualClock(start: Date(timeIntervalSince1970: 300))
        let tiers = [try makeMemoryTier(clock: first), try makeMemoryTier(clock: second)]
        #expect(try MultiCache<String, Data>(tiers).clock.now == Date(timeIntervalSince1970: 100))
        #expect(try MultiCache<String, Data>(tiers, clock: own).clock.now == Date(timeIntervalSince1970: 300))
    }
}

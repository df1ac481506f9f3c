import CacheCore
import CacheTesting
import Foundation
import Testing

@testable import MultiCache

@Suite struct MultiCacheWriteTests {
    @Test func writeReachesEveryTier() async throws {
        let tiers = try TwoTiers()
        let start = tiers.clock.now
        try await tiers.cache.setEntry(
            CacheEntry(value: bytes("v"), expiresAt: start.addingTimeInterval(30), cost: 7), forKey: "k")
        let expected = CacheEntry(value: bytes("v"), expiresAt: start.addingTimeInterval(30), cost: 7)
        #expect(try await tiers.fast.entry(forKey: "k") == expected)
        #expect(try await tiers.slow.entry(forKey: "k") == expected)
    }

    @Test func tierThatThrowsOnWriteIsNamedAndTheOthersKeepTheValue() async throws {
        // Given a slow tier whose writes fail
        let tiers = try TwoTiers()
        tiers.slow.failAlways(.setEntry, with: CacheError(.outOfSpace, "disk full"))

        // When a value is written
        do {
            try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .never)
            Issue.record("expected a tierFailure error")
        } catch let error as CacheError {
            // Then the error names the failed tier and its cause
            #expect(error.code == .tierFailure)
            #expect(error.tierFailures.map(\.index) == [1])
            #expect(error.tierFailures.map(\.name) == ["disk"])
            #expect((error.tierFailures.first?.error as? CacheError)?.code == .outOfSpace)
        }
        // And the fast tier holds the value
        #expect(try await tiers.fast.value(forKey: "k") == bytes("v"))
        #expect(try await tiers.cache.value(forKey: "k") == bytes("v"))
        #expect(tiers.cache.tierStatistics.map(\.errors) == [0, 1])
    }

    @Test func failedWriteDropsTheFailedTiersOlderEntry() async throws {
        // Given "old" in both tiers, and a fast tier whose next write fails
        let tiers = try TwoTiers()
        try await tiers.cache.setValue(bytes("old"), forKey: "k", expiry: .never)
        tiers.fast.failNext(.setEntry)

        // When "new" is written
        await #expect(throws: CacheError.self) {
            try await tiers.cache.setValue(bytes("new"), forKey: "k", expiry: .never)
        }

        // Then the fast tier does not keep serving "old": a read finds "new" in the slow tier
        #expect(try await tiers.fast.value(forKey: "k") == nil)
        #expect(try await tiers.cache.value(forKey: "k") == bytes("new"))
    }

    @Test func removeEntryRemovesFromEveryTier() async throws {
        let tiers = try TwoTiers()
        try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .never)
        try await tiers.cache.setValue(bytes("w"), forKey: "other", expiry: .never)
        try await tiers.cache.removeEntry(forKey: "k")
        #expect(try await tiers.fast.value(forKey: "k") == nil)
        #expect(try await tiers.slow.value(forKey: "k") == nil)
        #expect(try await tiers.cache.value(forKey: "other") == bytes("w"))
    }

    @Test func removeAllClearsEveryTierAndReportsPartialFailure() async throws {
        let tiers = try TwoTiers()
        try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .never)
        tiers.fast.failNext(.removeAll)
        do {
            try await tiers.cache.removeAll()
            Issue.record("expected a tierFailure error")
        } catch let error as CacheError {
            #expect(error.code == .tierFailure)
            #expect(error.tierFailures.map(\.index) == [0])
        }
        #expect(try await tiers.slow.value(forKey: "k") == nil)
        try await tiers.cache.removeAll()
        #expect(try await tiers.fast.value(forKey: "k") == nil)
    }

    @Test(.timeLimit(.minutes(10)))
    func writesGoToTheTiersConcurrently() async throws {
        // Given a slow tier that holds every write
        let tiers = try TwoTiers()
        tiers.slow.hold(.setEntry)

        // When a write starts
        async let write: Void = tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .never)
        await tiers.slow.waitUntilHeld(.setEntry)

        // Then the fast tier already has it while the slow write is still parked
        #expect(try await tiers.fast.value(forKey: "k") == bytes("v"))
        tiers.slow.release(.setEntry)
        try await write
        #expect(try await tiers.slow.value(forKey: "k") == bytes("v"))
    }

    @Test(.timeLimit(.minutes(10)))
    func removalDuringAReadKeepsTheReadsWriteBackOut() async throws {
        // Given a value only in the slow tier, and a read parked inside the slow tier
        let tiers = try TwoTiers()
        try await tiers.slow.setValue(bytes("v"), forKey: "k", expiry: .never)
        tiers.slow.hold(.entry)
        async let read = tiers.cache.value(forKey: "k")
        await tiers.slow.waitUntilHeld(.entry)

        // When the key is removed while the read is in flight (the slow tier's removal is not held)
        try await tiers.cache.removeEntry(forKey: "k")
        try await tiers.slow.setValue(bytes("v"), forKey: "k", expiry: .never)
        tiers.slow.release(.entry)

        // Then the read returns what it found, but does not copy it into the fast tier
        #expect(try await read == bytes("v"))
        #expect(try await tiers.fast.value(forKey: "k") == nil)
        #expect(tiers.cache.tierStatistics[0].writeBacks == 0)
    }

    @Test(.timeLimit(.minutes(10)))
    func removalWaitsForAWriteBackAlreadyUnderWay() async throws {
        // Given a read whose write-back into the fast tier is parked
        let tiers = try TwoTiers()
        try await tiers.slow.setValue(bytes("v"), forKey: "k", expiry: .never)
        tiers.fast.hold(.setEntry)
        async let read = tiers.cache.value(forKey: "k")
        await tiers.fast.waitUntilHeld(.setEntry)

        // When a removal starts, it parks without touching any tier until the write-back ends
        async let removal: Void = tiers.cache.removeEntry(forKey: "k")
        try await tiers.events.wait(for: .parkedMutation, count: 1)
        #expect(tiers.slow.callCount(.removeEntry) == 0)
        tiers.fast.release(.setEntry)
        #expect(try await read == bytes("v"))
        try await removal

        // Then the removal came after the write-back: no tier holds the key
        #expect(try await tiers.fast.value(forKey: "k") == nil)
        #expect(try await tiers.slow.value(forKey: "k") == nil)
    }

    @Test func completionHandlerVariantsComeFromTheProtocol() async throws {
        let tiers = try TwoTiers()
        try await tiers.slow.setValue(bytes("v"), forKey: "k", expiry: .never)
        let value: Data? = try await withCheckedThrowingContinuation { continuation in
            tiers.cache.value(forKey: "k") { continuation.resume(with: $0) }
        }
        #expect(value == bytes("v"))
    }
}

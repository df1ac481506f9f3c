import CacheCore
import Foundation
import Testing

@Suite struct CacheEntryTests {
    let expiresAt = Date(timeIntervalSince1970: 1_767_225_610)

    @Test func isLiveBeforeItsExpiryInstantAndExpiredExactlyAtIt() {
        let entry = CacheEntry(value: 1, expiresAt: expiresAt)
        #expect(!entry.isExpired(at: expiresAt.addingTimeInterval(-0.001)))
        #expect(!entry.isExpired(at: expiresAt.addingTimeInterval(-1e-6)))
        #expect(entry.isExpired(at: expiresAt))
        #expect(entry.isExpired(at: expiresAt.addingTimeInterval(0.001)))
    }

    @Test func anEntryWithoutExpiryNeverExpires() {
        let entry = CacheEntry(value: "v")
        #expect(entry.expiresAt == nil)
        #expect(!entry.isExpired(at: .distantFuture))
        #expect(entry.remainingLifetime(at: .distantFuture) == nil)
    }

    @Test func remainingLifetimeIsTheTimeLeftInSeconds() {
        let entry = CacheEntry(value: 1, expiresAt: expiresAt)
        #expect(entry.remainingLifetime(at: expiresAt.addingTimeInterval(-10)) == 10)
        #expect(entry.remainingLifetime(at: expiresAt) == 0)
        #expect(entry.remainingLifetime(at: expiresAt.addingTimeInterval(2.5)) == -2.5)
    }

    @Test func costDefaultsToNilSoTheTierComputesIt() {
        #expect(CacheEntry(value: 1).cost == nil)
        #expect(CacheEntry(value: 1, cost: 42).cost == 42)
    }

    @Test func equalityCoversValueExpiryAndCost() {
        let entry = CacheEntry(value: 1, expiresAt: expiresAt, cost: 3)
        #expect(entry == CacheEntry(value: 1, expiresAt: expiresAt, cost: 3))
        #expect(entry != CacheEntry(value: 2, expiresAt: expiresAt, cost: 3))
        #expect(entry != CacheEntry(value: 1, expiresAt: nil, cost: 3))
        #expect(entry != CacheEntry(value: 1, expiresAt: expiresAt, cost: nil))
        #expect(Set([entry, entry]).count == 1)
    }
}

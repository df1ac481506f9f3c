import Foundation
import Testing

@testable import CacheCore

/// The instants CacheCore judges for every tier: an entry is live while `now < expiresAt`, retained while
/// `now < staleUntil`, and refresh-ahead is due once the remaining lifetime is at most the refreshed fraction.
@Suite struct LifetimeBoundaryTests {
    let expiresAt = Date(timeIntervalSinceReferenceDate: 1_000)

    @Test func anEntryExpiresAtItsInstantAndNotBefore() {
        let entry = CacheEntry(value: 1, expiresAt: expiresAt)
        #expect(!entry.isExpired(at: expiresAt.addingTimeInterval(-0.001)))
        #expect(entry.isExpired(at: expiresAt))
    }

    @Test func aStaleEntryIsRetainedUntilItsStaleEndAndNotAtIt() {
        let staleUntil = expiresAt.addingTimeInterval(60)
        let entry = CacheEntry(value: 1, expiresAt: expiresAt, staleUntil: staleUntil)
        #expect(entry.isRetained(at: staleUntil.addingTimeInterval(-0.001)))
        #expect(!entry.isRetained(at: staleUntil))
    }

    @Test func refreshAheadIsDueOnceTheRemainingLifetimeReachesTheFraction() {
        // Given a 100 s lifetime refreshed ahead at 75 %: due with 25 s or less left
        let options = LoadOptions(refreshAhead: 0.75)
        let expiry = Expiry.after(.seconds(100))

        // Then it is not due with 25.5 s left, due with exactly 25 s left, and never for an unlimited lifetime
        #expect(!options.isRefreshAheadDue(expiresAt: 1_100, now: 1_074.5, expiry: expiry))
        #expect(options.isRefreshAheadDue(expiresAt: 1_100, now: 1_075, expiry: expiry))
        #expect(!options.isRefreshAheadDue(expiresAt: .infinity, now: 1_075, expiry: expiry))
    }
}

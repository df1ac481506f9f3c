import CacheCore
import Foundation
import StrataTestSupport
import Testing

@testable import RedisCache

/// The load lease against a real server: one holder at a time, expiry when a holder never releases, and a
/// waiter woken by the tracking push of the value's arrival (Docs/RedisCache.md, "Load fencing and leases").
/// Leases here last an hour unless a test needs one to expire (a ThreadSanitizer run on two loaded cores has
/// held a task back for over a minute between two awaits); every wait is bounded by its own deadline.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote), .serialized, .timeLimit(.minutes(10)))
struct RedisLeaseTests {
    static func lease(_ acquisition: RedisLeaseAcquisition) -> RedisLease? {
        guard case .acquired(let lease) = acquisition else { return nil }
        return lease
    }

    @Test func aLeaseIsHeldByOneInstanceAtATime() async throws {
        let server = try RedisServer()
        let (first, second) = try RedisLoadFenceTests.pair(server)
        let held = try #require(Self.lease(try await first.acquireLease(forKey: "k", duration: .seconds(3_600))))
        #expect(try await second.acquireLease(forKey: "k", duration: .seconds(3_600)) == .heldElsewhere)
        #expect(try await first.acquireLease(forKey: "k", duration: .seconds(3_600)) == .heldElsewhere)
        // Another key's lease is independent
        #expect(Self.lease(try await second.acquireLease(forKey: "other", duration: .seconds(3_600))) != nil)

        #expect(try await first.releaseLease(held))

        let taken = try #require(Self.lease(try await second.acquireLease(forKey: "k", duration: .seconds(3_600))))
        // The first holder's late release does not free the second holder's lease
        #expect(try await !first.releaseLease(held))
        #expect(try await first.acquireLease(forKey: "k", duration: .seconds(3_600)) == .heldElsewhere)
        #expect(try await second.releaseLease(taken))
    }

    @Test func aLeaseWhoseHolderNeverReleasesExpiresAndAWaiterTakesOver() async throws {
        // Given a holder that takes a 50 ms lease and never stores or releases
        let server = try RedisServer()
        let (holder, waiter) = try RedisLoadFenceTests.pair(server)
        #expect(Self.lease(try await holder.acquireLease(forKey: "k", duration: .milliseconds(50))) != nil)
        // When another instance waits for the entry (polling every 10 ms, for at most a minute)
        let outcome = try await waiter.waitForEntry(
            forKey: "k", until: .now + .seconds(60), pollInterval: .milliseconds(10))
        // Then it learns the lease is free, and takes it
        guard case .leaseFree = outcome else {
            Issue.record("expected the lease to be free, got \(outcome)")
            return
        }
        #expect(Self.lease(try await waiter.acquireLease(forKey: "k", duration: .seconds(3_600))) != nil)
    }

    @Test func aWaitOnALeaseStillHeldEndsAtItsDeadline() async throws {
        let server = try RedisServer()
        let (holder, waiter) = try RedisLoadFenceTests.pair(server)
        #expect(Self.lease(try await holder.acquireLease(forKey: "k", duration: .seconds(600))) != nil)
        let outcome = try await waiter.waitForEntry(
            forKey: "k", until: .now + .milliseconds(200), pollInterval: .milliseconds(20))
        guard case .timedOut = outcome else {
            Issue.record("expected a timeout, got \(outcome)")
            return
        }
    }

    @Test func aWaitForAnEntryAlreadyThereReturnsItAtOnce() async throws {
        let server = try RedisServer()
        let (holder, waiter) = try RedisLoadFenceTests.pair(server)
        try await holder.setValue("there", forKey: "k")
        let outcome = try await waiter.waitForEntry(forKey: "k", until: .now + .seconds(60))
        guard case .entry(let entry, let wake) = outcome else {
            Issue.record("expected the entry, got \(outcome)")
            return
        }
        #expect(entry.value == "there")
        #expect(wake == .start)
    }

    @Test func aWaiterIsWokenByTheTrackingPushOfAnotherInstancesStore() async throws {
        // Given a holder's lease and a waiter that polls only every 10 minutes
        let server = try RedisServer()
        let (holder, waiter) = try RedisLoadFenceTests.pair(server)
        // (a first write creates the namespace's epoch key: its push would be an "everything" for the waiter)
        try await holder.setValue("warm", forKey: "another key")
        let lease = try #require(Self.lease(try await holder.acquireLease(forKey: "k", duration: .seconds(600))))
        let waiting = Task {
            try await waiter.waitForEntry(forKey: "k", until: .now + .seconds(120), pollInterval: .seconds(600))
        }
        // …that is tracking and has looked twice (its start, and tracking's first "everything") in vain
        let ready = await RedisTesting.waitAsync(timeout: .seconds(60)) {
            waiter.health.isTracking && waiter.leaseWakes.unfinished >= 2
        }
        #expect(ready)
        // When the holder stores the value and releases
        let ticket = try await holder.loadTicket(forKey: "k", tags: [])
        #expect(try await holder.setEntry(CacheEntry(value: "loaded"), forKey: "k", ticket: ticket))
        #expect(try await holder.releaseLease(lease))
        // Then the waiter has it, woken by the push, never by a poll
        let outcome = try await waiting.value
        guard case .entry(let entry, let wake) = outcome else {
            Issue.record("expected the entry, got \(outcome)")
            return
        }
        #expect(entry.value == "loaded")
        #expect(wake == .push)
        #expect(waiter.leaseWakes.push >= 1)
        #expect(waiter.leaseWakes.poll == 0)
    }
}

import Foundation
import Testing

@testable import CacheCore

/// The coordinator's fences, each on its own: a removal both marks the load in flight as fenced and detaches
/// it (so later callers start a new load), a load or a write-back whose read began before a removal does not
/// store even when the removal ended before it began, and a fail-safe throttle ends at its instant.
@Suite struct CoordinatorFenceLayerTests {
    typealias Machine = CoordinatorStateMachine<String, String, String, Int>

    /// Joins a fresh waiter for `key`; returns the load it started and whether it must recheck the tiers, or
    /// `nil` when it joined a load in flight.
    func join(_ machine: inout Machine, _ key: String, seen: UInt64) -> (loadID: UInt64, recheck: Bool)? {
        let waiterID = machine.makeID()
        let action = machine.join(
            key: key, waiterID: waiterID, continuation: key, sequenceSeen: seen, isCancelled: false)
        guard case .startLoad(let loadID, let recheck) = action else { return nil }
        return (loadID, recheck)
    }

    func write(_ machine: inout Machine, _ key: String?) {
        _ = machine.beginMutation(of: key)
        machine.endMutation(of: key)
    }

    @Test func aRemovalDetachesTheLoadInFlightSoTheNextCallerLoadsAgain() throws {
        // Given a load of "k" in flight
        var machine = Machine()
        let first = try #require(join(&machine, "k", seen: machine.changeSequence))

        // When "k" is removed, then another caller misses
        write(&machine, "k")
        let second = join(&machine, "k", seen: machine.changeSequence)

        // Then that caller starts its own load rather than waiting for the fenced one
        #expect(second != nil)
        #expect(second?.loadID != first.loadID)
        #expect(machine.beginStoringLoad(first.loadID) == .skip)
    }

    @Test func aWipeDetachesEveryLoadInFlight() throws {
        // Given loads of two keys in flight
        var machine = Machine()
        let firstK = try #require(join(&machine, "k", seen: machine.changeSequence))
        let firstJ = try #require(join(&machine, "j", seen: machine.changeSequence))

        // When everything is removed, then both keys are asked for again
        write(&machine, nil)
        let secondK = join(&machine, "k", seen: machine.changeSequence)
        let secondJ = join(&machine, "j", seen: machine.changeSequence)

        // Then each starts a new load, and neither old one may store
        #expect(secondK != nil && secondJ != nil)
        #expect(machine.beginStoringLoad(firstK.loadID) == .skip)
        #expect(machine.beginStoringLoad(firstJ.loadID) == .skip)
    }

    @Test func aLoadWhoseReadBeganBeforeARemovalDoesNotStore() throws {
        // Given a caller that read "k" (a miss), then a removal of "k" that ended before the caller's load began
        var machine = Machine()
        let seen = machine.changeSequence
        write(&machine, "k")

        // When the caller starts its load
        let load = try #require(join(&machine, "k", seen: seen))

        // Then it rechecks the tiers, and its result is not stored: the read it follows may predate the removal
        #expect(load.recheck)
        #expect(machine.beginStoringLoad(load.loadID) == .skip)
    }

    @Test func aQuietLoadStores() throws {
        // Given a caller whose read saw every change so far (the counterpart of the fenced cases above)
        var machine = Machine()
        write(&machine, "other")
        let load = try #require(join(&machine, "k", seen: machine.changeSequence))

        // Then it need not recheck, and it stores
        #expect(!load.recheck)
        #expect(machine.beginStoringLoad(load.loadID) != .skip)
    }

    @Test func aWriteBackOfAReadThatBeganBeforeARemovalIsSkipped() {
        // Given a read of "k" and "j" that began before a removal of "k"
        var machine = Machine()
        let seen = machine.changeSequence
        write(&machine, "k")

        // Then writing "k" back is skipped, and writing "j" back is not
        #expect(machine.beginWriteBack(key: "k", sequenceSeen: seen) == .skip)
        #expect(machine.beginWriteBack(key: "j", sequenceSeen: seen) != .skip)
    }

    @Test func aFailSafeThrottleEndsAtItsInstant() {
        // Given a key throttled until an instant
        var machine = Machine()
        let until = Date(timeIntervalSinceReferenceDate: 1_000)
        machine.throttle("k", until: until)

        // Then it is throttled just before the instant and no longer at it
        #expect(machine.isThrottled("k", at: until.addingTimeInterval(-0.5)))
        #expect(!machine.isThrottled("k", at: until))
    }
}

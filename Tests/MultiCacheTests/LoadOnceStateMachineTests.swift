import Testing

@testable import MultiCache

/// The state machine with stand-ins: waiters and parked mutations are names, load tasks are numbers.
private typealias Machine = LoadOnceStateMachine<String, String, String, Int>

// Swift Testing's macros cannot call mutating methods, so each step is taken first and checked after.
@Suite struct LoadOnceStateMachineTests {
    /// Joins `waiter` for `key` and returns the id of the load it started, or `nil` when it joined one.
    private func join(_ machine: inout Machine, _ key: String, _ waiter: String, seen: UInt64 = 0) -> UInt64? {
        let id = machine.makeID()
        let action = machine.join(
            key: key, waiterID: id, continuation: waiter, finishedLoadsSeen: seen, isCancelled: false)
        if case .startLoad(let loadID, _) = action { return loadID }
        return nil
    }

    @Test func firstCallerStartsTheLoadAndLaterCallersJoinIt() throws {
        var machine = Machine()
        let started = join(&machine, "k", "A")
        let second = join(&machine, "k", "B")
        let third = join(&machine, "k", "C")
        let otherKey = join(&machine, "other", "D")
        let loadID = try #require(started)
        #expect(second == nil && third == nil)
        #expect(otherKey != nil)
        #expect(machine.sharedJoins == 2)

        let answered = machine.finishLoad(loadID)
        #expect(Set(answered) == ["A", "B", "C"])
        // The key is free again: the next caller starts a new load
        let next = join(&machine, "k", "E")
        #expect(next != nil)
    }

    @Test func callerCancelledBeforeJoiningIsAnsweredAtOnce() {
        var machine = Machine()
        let id = machine.makeID()
        let action = machine.join(key: "k", waiterID: id, continuation: "A", finishedLoadsSeen: 0, isCancelled: true)
        guard case .resumeCancelled("A") = action else {
            Issue.record("expected resumeCancelled(A), got \(action)")
            return
        }
        let next = join(&machine, "k", "B")
        #expect(next != nil)
    }

    @Test func lastWaiterToCancelAbandonsTheLoadAndCancelsItsTask() throws {
        var machine = Machine()
        let firstID = machine.makeID()
        let action = machine.join(
            key: "k", waiterID: firstID, continuation: "A", finishedLoadsSeen: 0, isCancelled: false)
        guard case .startLoad(let loadID, _) = action else {
            Issue.record("A should start the load")
            return
        }
        let mustCancelAtAttach = machine.attach(7, toLoad: loadID)
        #expect(mustCancelAtAttach == false)
        let secondID = machine.makeID()
        _ = machine.join(key: "k", waiterID: secondID, continuation: "B", finishedLoadsSeen: 0, isCancelled: false)

        guard case .resumeCancelled("A", cancelling: nil) = machine.cancelWaiter(firstID) else {
            Issue.record("A leaves; the load goes on for B")
            return
        }
        guard case .resumeCancelled("B", cancelling: 7) = machine.cancelWaiter(secondID) else {
            Issue.record("B was the last: its load's task must be cancelled")
            return
        }
        // The abandoned load can neither store nor answer anyone, and the key starts afresh
        let store = machine.beginStoringLoad(loadID)
        let answered = machine.finishLoad(loadID)
        let next = join(&machine, "k", "C")
        #expect(store == nil)
        #expect(answered.isEmpty)
        #expect(next != nil)
        // Cancelling an answered waiter again does nothing
        guard case .none = machine.cancelWaiter(firstID) else {
            Issue.record("cancelling twice must not resume twice")
            return
        }
    }

    @Test func taskAttachedAfterEveryWaiterLeftIsCancelled() throws {
        var machine = Machine()
        let id = machine.makeID()
        let action = machine.join(key: "k", waiterID: id, continuation: "A", finishedLoadsSeen: 0, isCancelled: false)
        guard case .startLoad(let loadID, _) = action else {
            Issue.record("A should start the load")
            return
        }
        _ = machine.cancelWaiter(id)
        let mustCancel = machine.attach(7, toLoad: loadID)
        #expect(mustCancel == true)
    }

    @Test func removalFencesTheKeysLoadAndDetachesIt() throws {
        var machine = Machine()
        let fenced = try #require(join(&machine, "k", "A"))
        let other = try #require(join(&machine, "other", "B"))

        let pending = machine.beginMutation(of: "k")
        #expect(pending.isEmpty)

        // The fenced load may not store; a load of another key may
        let fencedStore = machine.beginStoringLoad(fenced)
        let otherStore = machine.beginStoringLoad(other)
        #expect(fencedStore == nil)
        #expect(otherStore != nil)
        // A new caller for the key starts a new load instead of joining the fenced one
        let next = join(&machine, "k", "C")
        #expect(next != nil)
        // The fenced load still answers its own waiter
        let answered = machine.finishLoad(fenced)
        #expect(answered == ["A"])
    }

    @Test func removeAllFencesEveryLoad() throws {
        var machine = Machine()
        let first = try #require(join(&machine, "a", "A"))
        let second = try #require(join(&machine, "b", "B"))
        _ = machine.beginMutation(of: nil)
        let firstStore = machine.beginStoringLoad(first)
        let secondStore = machine.beginStoringLoad(second)
        #expect(firstStore == nil && secondStore == nil)
    }

    @Test func writeBackIsDroppedOnceAMutationBegan() {
        var machine = Machine()
        let epoch = machine.mutationEpoch
        let before = machine.beginWriteBack(key: "k", epochSeen: epoch)
        _ = machine.beginMutation(of: "unrelated")
        let after = machine.beginWriteBack(key: "k", epochSeen: epoch)
        #expect(before != nil)
        #expect(after == nil)
    }

    @Test func mutationWaitsOnlyForStoresOfItsKeyThatHadBegun() throws {
        var machine = Machine()
        let epoch = machine.mutationEpoch
        let writeBackK = machine.beginWriteBack(key: "k", epochSeen: epoch)
        let writeBackOther = machine.beginWriteBack(key: "other", epochSeen: epoch)
        let storeK = try #require(writeBackK)
        let storeOther = try #require(writeBackOther)

        let pending = machine.beginMutation(of: "k")
        let resumeNow = machine.waitForStores(pending, continuation: "removal")
        #expect(pending == [storeK])
        #expect(resumeNow == nil)
        #expect(machine.parkedMutationCount == 1)

        // Another key's store ending does not release it; its own key's does
        let afterOther = machine.endStore(storeOther)
        let afterK = machine.endStore(storeK)
        #expect(afterOther.isEmpty)
        #expect(afterK == ["removal"])
        #expect(machine.parkedMutationCount == 0)
    }

    @Test func mutationWhoseStoresAlreadyEndedIsNotParked() throws {
        var machine = Machine()
        let writeBack = machine.beginWriteBack(key: "k", epochSeen: 0)
        let store = try #require(writeBack)
        let pending = machine.beginMutation(of: nil)
        _ = machine.endStore(store)
        let resumeNow = machine.waitForStores(pending, continuation: "removal")
        #expect(resumeNow == "removal")
        #expect(machine.parkedMutationCount == 0)
    }

    @Test func newLoadReadsTheTiersAgainWhenAnotherLoadFinishedSinceTheCallersRead() throws {
        var machine = Machine()
        let seen = machine.finishedLoads
        let first = try #require(join(&machine, "k", "A", seen: seen))
        _ = machine.finishLoad(first)

        let lateID = machine.makeID()
        let late = machine.join(
            key: "k", waiterID: lateID, continuation: "B", finishedLoadsSeen: seen, isCancelled: false)
        let freshID = machine.makeID()
        let fresh = machine.join(
            key: "j", waiterID: freshID, continuation: "C", finishedLoadsSeen: machine.finishedLoads, isCancelled: false
        )
        guard case .startLoad(_, recheckTiers: true) = late else {
            Issue.record("B read before A's load finished: its load must read the tiers again")
            return
        }
        guard case .startLoad(_, recheckTiers: false) = fresh else {
            Issue.record("nothing finished since C's read: no second read")
            return
        }
    }
}

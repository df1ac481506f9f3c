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
            key: key, waiterID: id, continuation: waiter, epochSeen: seen, isCancelled: false)
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
        let action = machine.join(key: "k", waiterID: id, continuation: "A", epochSeen: 0, isCancelled: true)
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
            key: "k", waiterID: firstID, continuation: "A", epochSeen: 0, isCancelled: false)
        guard case .startLoad(let loadID, _) = action else {
            Issue.record("A should start the load")
            return
        }
        let mustCancelAtAttach = machine.attach(7, toLoad: loadID)
        #expect(mustCancelAtAttach == false)
        let secondID = machine.makeID()
        _ = machine.join(key: "k", waiterID: secondID, continuation: "B", epochSeen: 0, isCancelled: false)

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
        let action = machine.join(key: "k", waiterID: id, continuation: "A", epochSeen: 0, isCancelled: false)
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

    @Test func writeBackIsDroppedOnceAMutationOfItsKeyBegan() throws {
        var machine = Machine()
        let epoch = machine.mutationEpoch
        let before = machine.beginWriteBack(key: "k", epochSeen: epoch)
        _ = machine.endStore(try #require(before))
        _ = machine.beginMutation(of: "k")
        machine.endMutation(of: "k")
        let after = machine.beginWriteBack(key: "k", epochSeen: epoch)
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

    @Test func newLoadReadsTheTiersAgainWhenAnotherLoadStoredSinceTheCallersRead() throws {
        // Given a caller B that noted the sequence, then a load of its key that stored and finished
        var machine = Machine()
        let seen = machine.mutationEpoch
        let first = try #require(join(&machine, "k", "A", seen: seen))
        let firstStore = machine.beginStoringLoad(first)
        _ = machine.endStore(try #require(firstStore))
        _ = machine.finishLoad(first)

        // When B, and C on a key nobody touched, find no load to join
        let lateID = machine.makeID()
        let late = machine.join(key: "k", waiterID: lateID, continuation: "B", epochSeen: seen, isCancelled: false)
        let freshID = machine.makeID()
        let fresh = machine.join(key: "j", waiterID: freshID, continuation: "C", epochSeen: seen, isCancelled: false)

        // Then B's load reads again first (and, as no write ran, may store); C's does not read again
        guard case .startLoad(let lateLoad, recheckTiers: true) = late else {
            Issue.record("B read before A's load stored: its load must read the tiers again")
            return
        }
        guard case .startLoad(_, recheckTiers: false) = fresh else {
            Issue.record("nothing changed j since C's read: no second read")
            return
        }
        let lateStore = machine.beginStoringLoad(lateLoad)
        #expect(lateStore != nil)
    }

    @Test func writeBetweenTheCallersReadAndItsJoinFencesTheNewLoad() throws {
        // Given a caller that noted the sequence before reading, and a write of its key that ran meanwhile
        var machine = Machine()
        let seen = machine.mutationEpoch
        _ = machine.beginMutation(of: "k")
        machine.endMutation(of: "k")

        // When it finds no load to join
        let id = machine.makeID()
        let action = machine.join(key: "k", waiterID: id, continuation: "A", epochSeen: seen, isCancelled: false)

        // Then its load reads the tiers again and may not store; a later caller joins that load
        guard case .startLoad(let loadID, recheckTiers: true) = action else {
            Issue.record("a write after the caller's read: the new load must read again")
            return
        }
        let seenLater = machine.mutationEpoch
        let joined = join(&machine, "k", "B", seen: seenLater)
        let store = machine.beginStoringLoad(loadID)
        let answered = machine.finishLoad(loadID)
        #expect(joined == nil)
        #expect(store == nil)
        #expect(Set(answered) == ["A", "B"])
    }

    @Test(arguments: [true, false])
    func writeRunningDuringTheCallersReadFencesTheNewLoad(_ writeEndsBeforeTheJoin: Bool) throws {
        // Given a write of the key that began before the caller noted the sequence
        var machine = Machine()
        _ = machine.beginMutation(of: "k")
        let seen = machine.mutationEpoch
        if writeEndsBeforeTheJoin { machine.endMutation(of: "k") }

        // When the caller finds no load to join
        let id = machine.makeID()
        let action = machine.join(key: "k", waiterID: id, continuation: "A", epochSeen: seen, isCancelled: false)

        // Then its load reads again and never stores, even once the write has ended
        guard case .startLoad(let loadID, recheckTiers: true) = action else {
            Issue.record("the caller read while a write ran: its load must read again")
            return
        }
        if !writeEndsBeforeTheJoin { machine.endMutation(of: "k") }
        let store = machine.beginStoringLoad(loadID)
        #expect(store == nil)
    }

    @Test func removeAllBetweenTheCallersReadAndItsJoinFencesTheNewLoad() throws {
        var machine = Machine()
        let seen = machine.mutationEpoch
        _ = machine.beginMutation(of: nil)
        machine.endMutation(of: nil)
        let id = machine.makeID()
        let action = machine.join(key: "k", waiterID: id, continuation: "A", epochSeen: seen, isCancelled: false)
        guard case .startLoad(let loadID, recheckTiers: true) = action else {
            Issue.record("a wipe after the caller's read: the new load must read again")
            return
        }
        let store = machine.beginStoringLoad(loadID)
        #expect(store == nil)
    }

    @Test func writeOfAnotherKeyNeitherFencesALoadNorDropsAWriteBack() throws {
        // Given a caller and a read of "k" that noted the sequence, then a write of "other"
        var machine = Machine()
        let seen = machine.mutationEpoch
        _ = machine.beginMutation(of: "other")
        machine.endMutation(of: "other")

        // When the caller starts a load and the read writes back
        let id = machine.makeID()
        let action = machine.join(key: "k", waiterID: id, continuation: "A", epochSeen: seen, isCancelled: false)
        let writeBack = machine.beginWriteBack(key: "k", epochSeen: seen)

        // Then neither is held back: the write touched another key
        guard case .startLoad(let loadID, recheckTiers: false) = action else {
            Issue.record("a write of another key must not force a second read")
            return
        }
        #expect(writeBack != nil)
        _ = machine.endStore(try #require(writeBack))
        let store = machine.beginStoringLoad(loadID)
        #expect(store != nil)
    }

    @Test func noStoreOfAKeyBeginsWhileAWriteOfItRuns() throws {
        // Given a load registered before a write of its key began, and a read that began after it
        var machine = Machine()
        let loadID = try #require(join(&machine, "k", "A"))
        _ = machine.beginMutation(of: "k")
        let readEpoch = machine.mutationEpoch

        // When both try to store while the write is still running, and once it has ended
        let duringWrite = machine.beginWriteBack(key: "k", epochSeen: readEpoch)
        machine.endMutation(of: "k")
        let afterWrite = machine.beginWriteBack(key: "k", epochSeen: readEpoch)
        let load = machine.beginStoringLoad(loadID)

        // Then none may: the read saw the tiers mid-write, the load began before the write
        #expect(duringWrite == nil)
        #expect(afterWrite == nil)
        #expect(load == nil)
        // And a read that begins after the write has ended may write back
        let later = machine.beginWriteBack(key: "k", epochSeen: machine.mutationEpoch)
        #expect(later != nil)
    }

    @Test func loadDoesNotStoreWhileAWriteBackOfItsKeyRuns() throws {
        var machine = Machine()
        let loadID = try #require(join(&machine, "k", "A"))
        let writeBack = machine.beginWriteBack(key: "k", epochSeen: machine.mutationEpoch)
        let store = machine.beginStoringLoad(loadID)
        #expect(writeBack != nil)
        #expect(store == nil)
    }

    @Test func forgettingOldStampsOnlyMakesTheAnswersMoreCautious() throws {
        // Given a machine that remembers two keys, and a caller of "k" that noted the sequence
        var machine = LoadOnceStateMachine<String, String, String, Int>(stampLimit: 2)
        let seen = machine.mutationEpoch

        // When three other keys are written, so the table starts afresh
        for key in ["a", "b", "c"] {
            _ = machine.beginMutation(of: key)
            machine.endMutation(of: key)
        }
        let id = machine.makeID()
        let action = machine.join(key: "k", waiterID: id, continuation: "A", epochSeen: seen, isCancelled: false)

        // Then the caller is treated as if "k" had been written (safe: it reads again, stores nothing)
        guard case .startLoad(let loadID, recheckTiers: true) = action else {
            Issue.record("a forgotten stamp must count as a change")
            return
        }
        let store = machine.beginStoringLoad(loadID)
        #expect(store == nil)
        // And a caller that noted the sequence after that is not held back
        let seenLater = machine.mutationEpoch
        let fresh = try #require(join(&machine, "j", "B", seen: seenLater))
        let freshStore = machine.beginStoringLoad(fresh)
        #expect(freshStore != nil)
    }
}

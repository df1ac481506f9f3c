import Testing

@testable import CacheCore

/// The state machine with stand-ins: waiters and parked mutations are names, load tasks are numbers.
private typealias Machine = CoordinatorStateMachine<String, String, String, Int>

// Swift Testing's macros cannot call mutating methods, so each step is taken first and checked after.
@Suite struct CoordinatorStateMachineTests {
    /// Runs a whole write or removal of `key` (every key when `nil`): its fence, then its end.
    private func write(_ machine: inout Machine, _ key: String?) {
        _ = machine.beginMutation(of: key)
        machine.endMutation(of: key)
    }

    /// Joins a fresh waiter `waiter` for `key` and returns the machine's action.
    private func joinAction(
        _ machine: inout Machine, _ key: String, _ waiter: String, seen: UInt64
    ) -> Machine.JoinAction {
        let id = machine.makeID()
        return machine.join(key: key, waiterID: id, continuation: waiter, sequenceSeen: seen, isCancelled: false)
    }

    /// The store id a store action carries, or `nil` when the store is skipped.
    private func storeID(_ action: Machine.StoreAction) -> UInt64? {
        guard case .store(let storeID) = action else { return nil }
        return storeID
    }

    /// The waiters a finished load answers.
    private func waiters(_ action: Machine.FinishAction) -> [String] {
        guard case .resumeWaiters(let waiters) = action else { return [] }
        return waiters
    }

    /// The writes and removals an ended store releases.
    private func released(_ action: Machine.EndStoreAction) -> [String] {
        guard case .resumeMutations(let mutations) = action else { return [] }
        return mutations
    }

    /// The stores a write or removal must wait for.
    private func stores(_ action: Machine.FenceAction) -> Set<UInt64> {
        guard case .waitForStores(let stores) = action else { return [] }
        return stores
    }

    /// Joins `waiter` for `key` and returns the id of the load it started, or `nil` when it joined one.
    private func join(_ machine: inout Machine, _ key: String, _ waiter: String, seen: UInt64 = 0) -> UInt64? {
        let id = machine.makeID()
        let action = machine.join(
            key: key, waiterID: id, continuation: waiter, sequenceSeen: seen, isCancelled: false)
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

        let answered = waiters(machine.finishLoad(loadID))
        #expect(Set(answered) == ["A", "B", "C"])
        // The key is free again: the next caller starts a new load
        let next = join(&machine, "k", "E")
        #expect(next != nil)
    }

    @Test func callerCancelledBeforeJoiningIsAnsweredAtOnce() {
        var machine = Machine()
        let id = machine.makeID()
        let action = machine.join(key: "k", waiterID: id, continuation: "A", sequenceSeen: 0, isCancelled: true)
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
            key: "k", waiterID: firstID, continuation: "A", sequenceSeen: 0, isCancelled: false)
        guard case .startLoad(let loadID, _) = action else {
            Issue.record("A should start the load")
            return
        }
        let mustCancelAtAttach = machine.attach(7, toLoad: loadID)
        #expect(mustCancelAtAttach != .cancelTask)
        let secondID = machine.makeID()
        _ = machine.join(key: "k", waiterID: secondID, continuation: "B", sequenceSeen: 0, isCancelled: false)

        guard case .resumeCancelled("A", cancelling: nil) = machine.cancelWaiter(firstID) else {
            Issue.record("A leaves; the load goes on for B")
            return
        }
        guard case .resumeCancelled("B", cancelling: 7) = machine.cancelWaiter(secondID) else {
            Issue.record("B was the last: its load's task must be cancelled")
            return
        }
        // The abandoned load can neither store nor answer anyone, and the key starts afresh
        let store = storeID(machine.beginStoringLoad(loadID))
        let answered = waiters(machine.finishLoad(loadID))
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
        let action = machine.join(key: "k", waiterID: id, continuation: "A", sequenceSeen: 0, isCancelled: false)
        guard case .startLoad(let loadID, _) = action else {
            Issue.record("A should start the load")
            return
        }
        _ = machine.cancelWaiter(id)
        let mustCancel = machine.attach(7, toLoad: loadID)
        #expect(mustCancel == .cancelTask)
    }

    @Test func removalFencesTheKeysLoadAndDetachesIt() throws {
        var machine = Machine()
        let fenced = try #require(join(&machine, "k", "A"))
        let other = try #require(join(&machine, "other", "B"))

        let pending = stores(machine.beginMutation(of: "k"))
        #expect(pending.isEmpty)

        // The fenced load may not store; a load of another key may
        let fencedStore = storeID(machine.beginStoringLoad(fenced))
        let otherStore = storeID(machine.beginStoringLoad(other))
        #expect(fencedStore == nil)
        #expect(otherStore != nil)
        // A new caller for the key starts a new load instead of joining the fenced one
        let next = join(&machine, "k", "C")
        #expect(next != nil)
        // The fenced load still answers its own waiter
        let answered = waiters(machine.finishLoad(fenced))
        #expect(answered == ["A"])
    }

    @Test func removeAllFencesEveryLoad() throws {
        var machine = Machine()
        let first = try #require(join(&machine, "a", "A"))
        let second = try #require(join(&machine, "b", "B"))
        _ = machine.beginMutation(of: nil)
        let firstStore = storeID(machine.beginStoringLoad(first))
        let secondStore = storeID(machine.beginStoringLoad(second))
        #expect(firstStore == nil && secondStore == nil)
    }

    @Test func writeBackIsDroppedOnceAMutationOfItsKeyBegan() throws {
        var machine = Machine()
        let seen = machine.changeSequence
        let before = storeID(machine.beginWriteBack(key: "k", sequenceSeen: seen))
        _ = machine.endStore(try #require(before))
        write(&machine, "k")
        let after = storeID(machine.beginWriteBack(key: "k", sequenceSeen: seen))
        #expect(after == nil)
    }

    @Test func mutationWaitsOnlyForStoresOfItsKeyThatHadBegun() throws {
        var machine = Machine()
        let seen = machine.changeSequence
        let writeBackK = storeID(machine.beginWriteBack(key: "k", sequenceSeen: seen))
        let writeBackOther = storeID(machine.beginWriteBack(key: "other", sequenceSeen: seen))
        let storeK = try #require(writeBackK)
        let storeOther = try #require(writeBackOther)

        let pending = stores(machine.beginMutation(of: "k"))
        let parking = machine.waitForStores(pending, continuation: "removal")
        #expect(pending == [storeK])
        guard case .parked = parking else {
            Issue.record("a store of the key is under way: the removal must be parked")
            return
        }
        #expect(machine.parkedMutationCount == 1)

        // Another key's store ending does not release it; its own key's does
        let afterOther = released(machine.endStore(storeOther))
        let afterK = released(machine.endStore(storeK))
        #expect(afterOther.isEmpty)
        #expect(afterK == ["removal"])
        #expect(machine.parkedMutationCount == 0)
    }

    @Test func mutationWhoseStoresAlreadyEndedIsNotParked() throws {
        var machine = Machine()
        let writeBack = storeID(machine.beginWriteBack(key: "k", sequenceSeen: 0))
        let store = try #require(writeBack)
        let pending = stores(machine.beginMutation(of: nil))
        _ = machine.endStore(store)
        guard case .resume("removal") = machine.waitForStores(pending, continuation: "removal") else {
            Issue.record("every store it waited for has ended: the removal must be resumed at once")
            return
        }
        #expect(machine.parkedMutationCount == 0)
    }

    @Test func newLoadReadsTheTiersAgainWhenAnotherLoadStoredSinceTheCallersRead() throws {
        // Given a caller B that noted the sequence, then a load of its key that stored and finished
        var machine = Machine()
        let seen = machine.changeSequence
        let first = try #require(join(&machine, "k", "A", seen: seen))
        let firstStore = storeID(machine.beginStoringLoad(first))
        _ = machine.endStore(try #require(firstStore))
        _ = machine.finishLoad(first)

        // When B, and C on a key nobody touched, find no load to join
        let late = joinAction(&machine, "k", "B", seen: seen)
        let fresh = joinAction(&machine, "j", "C", seen: seen)

        // Then B's load reads again first (and, as no write ran, may store); C's does not read again
        guard case .startLoad(let lateLoad, recheckTiers: true) = late else {
            Issue.record("B read before A's load stored: its load must read the tiers again")
            return
        }
        guard case .startLoad(_, recheckTiers: false) = fresh else {
            Issue.record("nothing changed j since C's read: no second read")
            return
        }
        let lateStore = storeID(machine.beginStoringLoad(lateLoad))
        #expect(lateStore != nil)
    }

    @Test func writeBetweenTheCallersReadAndItsJoinFencesTheNewLoad() throws {
        // Given a caller that noted the sequence before reading, and a write of its key that ran meanwhile
        var machine = Machine()
        let seen = machine.changeSequence
        write(&machine, "k")

        // When it finds no load to join
        let action = joinAction(&machine, "k", "A", seen: seen)

        // Then its load reads the tiers again and may not store; a later caller joins that load
        guard case .startLoad(let loadID, recheckTiers: true) = action else {
            Issue.record("a write after the caller's read: the new load must read again")
            return
        }
        let seenLater = machine.changeSequence
        let joined = join(&machine, "k", "B", seen: seenLater)
        let store = storeID(machine.beginStoringLoad(loadID))
        let answered = waiters(machine.finishLoad(loadID))
        #expect(joined == nil)
        #expect(store == nil)
        #expect(Set(answered) == ["A", "B"])
    }

    @Test(arguments: [true, false])
    func writeRunningDuringTheCallersReadFencesTheNewLoad(_ writeEndsBeforeTheJoin: Bool) throws {
        // Given a write of the key that began before the caller noted the sequence
        var machine = Machine()
        _ = machine.beginMutation(of: "k")
        let seen = machine.changeSequence
        if writeEndsBeforeTheJoin { machine.endMutation(of: "k") }

        // When the caller finds no load to join
        let action = joinAction(&machine, "k", "A", seen: seen)

        // Then its load reads again and never stores, even once the write has ended
        guard case .startLoad(let loadID, recheckTiers: true) = action else {
            Issue.record("the caller read while a write ran: its load must read again")
            return
        }
        if !writeEndsBeforeTheJoin { machine.endMutation(of: "k") }
        let store = storeID(machine.beginStoringLoad(loadID))
        #expect(store == nil)
    }

    @Test func removeAllBetweenTheCallersReadAndItsJoinFencesTheNewLoad() throws {
        var machine = Machine()
        let seen = machine.changeSequence
        write(&machine, nil)
        let action = joinAction(&machine, "k", "A", seen: seen)
        guard case .startLoad(let loadID, recheckTiers: true) = action else {
            Issue.record("a wipe after the caller's read: the new load must read again")
            return
        }
        let store = storeID(machine.beginStoringLoad(loadID))
        #expect(store == nil)
    }

    @Test func writeOfAnotherKeyNeitherFencesALoadNorDropsAWriteBack() throws {
        // Given a caller and a read of "k" that noted the sequence, then a write of "other"
        var machine = Machine()
        let seen = machine.changeSequence
        write(&machine, "other")

        // When the caller starts a load and the read writes back
        let action = joinAction(&machine, "k", "A", seen: seen)
        let writeBack = storeID(machine.beginWriteBack(key: "k", sequenceSeen: seen))

        // Then neither is held back: the write touched another key
        guard case .startLoad(let loadID, recheckTiers: false) = action else {
            Issue.record("a write of another key must not force a second read")
            return
        }
        #expect(writeBack != nil)
        _ = machine.endStore(try #require(writeBack))
        let store = storeID(machine.beginStoringLoad(loadID))
        #expect(store != nil)
    }

    @Test func noStoreOfAKeyBeginsWhileAWriteOfItRuns() throws {
        // Given a load registered before a write of its key began, and a read that began after it
        var machine = Machine()
        let loadID = try #require(join(&machine, "k", "A"))
        _ = machine.beginMutation(of: "k")
        let readSequence = machine.changeSequence

        // When both try to store while the write is still running, and once it has ended
        let duringWrite = storeID(machine.beginWriteBack(key: "k", sequenceSeen: readSequence))
        machine.endMutation(of: "k")
        let afterWrite = storeID(machine.beginWriteBack(key: "k", sequenceSeen: readSequence))
        let load = storeID(machine.beginStoringLoad(loadID))

        // Then none may: the read saw the tiers mid-write, the load began before the write
        #expect(duringWrite == nil)
        #expect(afterWrite == nil)
        #expect(load == nil)
        // And a read that begins after the write has ended may write back
        let later = storeID(machine.beginWriteBack(key: "k", sequenceSeen: machine.changeSequence))
        #expect(later != nil)
    }

    @Test func loadDoesNotStoreWhileAWriteBackOfItsKeyRuns() throws {
        var machine = Machine()
        let loadID = try #require(join(&machine, "k", "A"))
        let writeBack = storeID(machine.beginWriteBack(key: "k", sequenceSeen: machine.changeSequence))
        let store = storeID(machine.beginStoringLoad(loadID))
        #expect(writeBack != nil)
        #expect(store == nil)
    }

    @Test func forgettingOldStampsOnlyMakesTheAnswersMoreCautious() throws {
        // Given a machine that remembers two keys, and a caller of "k" that noted the sequence
        var machine = CoordinatorStateMachine<String, String, String, Int>(stampLimit: 2)
        let seen = machine.changeSequence

        // When three other keys are written, so the table starts afresh
        for key in ["a", "b", "c"] {
            write(&machine, key)
        }
        let action = joinAction(&machine, "k", "A", seen: seen)

        // Then the caller is treated as if "k" had been written (safe: it reads again, stores nothing)
        guard case .startLoad(let loadID, recheckTiers: true) = action else {
            Issue.record("a forgotten stamp must count as a change")
            return
        }
        let store = storeID(machine.beginStoringLoad(loadID))
        #expect(store == nil)
        // And a caller that noted the sequence after that is not held back
        let seenLater = machine.changeSequence
        let fresh = try #require(join(&machine, "j", "B", seen: seenLater))
        let freshStore = storeID(machine.beginStoringLoad(fresh))
        #expect(freshStore != nil)
    }
}

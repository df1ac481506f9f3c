/// The one owner of a cache's load-once coordination (a `MultiCache`'s, and a single `MemoryCache`'s or
/// `DiskCache`'s once it loads; package access, so every cache shares one implementation): the lock, the
/// ``CoordinatorStateMachine`` behind it, and the lock-free copy of its change sequence
/// (``ChangeSequenceMirror``).
///
/// Every event (a caller joining a load, a load finishing, a store beginning or ending, a write or removal
/// fencing its key or ending) is one method here. It takes the lock, hands the event to the machine,
/// publishes the change sequence in the same critical section, releases the lock, and then carries out the
/// action the machine returned: resumes continuations, starts or cancels a load's task, lets a store run.
/// Nothing else touches the machine, so no event can forget to publish the sequence, and no continuation is
/// resumed and no tier, loader or observer is called under the lock. The pairing follows
/// swift-async-algorithms' `ChannelStateMachine` and `ChannelStorage`.
///
/// Thread-safe: every method may be called from any task at once.
@usableFromInline
package final class CoordinatorStorage<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The machine, with the continuation and task types it parks.
    typealias Machine = CoordinatorStateMachine<
        Key, CheckedContinuation<Value, any Error>, CheckedContinuation<Void, Never>, Task<Void, Never>
    >

    private let machine: Locked<Machine>
    @usableFromInline let mirror = ChangeSequenceMirror()
    /// Held by a synchronous tier across the whole store of a loaded value and by the start of each of its
    /// synchronous writes and removals (see `CoordinatorStorage+Synchronous.swift`); never taken while
    /// `machine`'s lock is held, so the order is always this one first.
    let storeGate = Locked(())
    /// Told of the events tests wait for; `nil` (and never read on a hit) unless a test sets one.
    private let eventObserver = Locked<(@Sendable (CoordinatorEvent) -> Void)?>(nil)

    /// Creates the coordination of an idle cache.
    ///
    /// - Parameter stampLimit: Keys the machine's stamp tables remember (see ``CoordinatorStateMachine``).
    package init(stampLimit: Int = 1_024) {
        machine = Locked(Machine(stampLimit: stampLimit))
    }

    /// Runs one event under the lock and returns the machine's action, to be carried out after the lock
    /// is released. The sequence is published here, and only here, so the copy never lags an event.
    func handle<Action>(_ event: (inout Machine) -> Action) -> Action {
        machine.withLock { machine in
            let action = event(&machine)
            mirror.publish(machine.changeSequence)
            return action
        }
    }

    // MARK: - Reads and write-backs

    /// The change sequence as a read or a load-once caller notes it before asking the first tier; read
    /// without the lock.
    @inlinable
    package var changeSequence: UInt64 {
        // Inlined, in other modules too: a load-once hit of a synchronous tier reads it, and a call to this
        // generic class's getter cost that hit more than the read itself.
        @inline(__always) get { mirror.load() }
    }

    /// Runs `write`, which copies a hit into faster tiers, unless `key` changed since the read noted
    /// `sequenceSeen` or a write, removal or other store of it is running; a write or removal that begins
    /// while `write` runs waits for it.
    ///
    /// - Returns: What `write` returned, or `nil` when the write-back was dropped.
    package func writeBack<Result>(key: Key, sequenceSeen: UInt64, _ write: () async -> Result) async -> Result? {
        await store(handle { $0.beginWriteBack(key: key, sequenceSeen: sequenceSeen) }, write)
    }

    // MARK: - Load-once

    /// Waits for the load of `key` that a caller who missed in every tier joins, starting it when none is
    /// in flight, and returns its result.
    ///
    /// - Parameters:
    ///   - key: The key that missed.
    ///   - sequenceSeen: ``changeSequence`` as the caller noted it before its tier reads.
    ///   - start: Starts the load's task, given its id and whether it must read the tiers again first;
    ///     called at most once, outside the lock.
    /// - Throws: What the load threw; `CancellationError` when the caller's task is cancelled.
    package func joinLoad(
        of key: Key,
        sequenceSeen: UInt64,
        start: (_ loadID: UInt64, _ recheckTiers: Bool) -> Task<Void, Never>
    ) async throws -> Value {
        let waiterID = handle { $0.makeID() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let action = handle {
                    $0.join(
                        key: key, waiterID: waiterID, continuation: continuation,
                        sequenceSeen: sequenceSeen, isCancelled: Task.isCancelled)
                }
                switch action {
                case .wait:
                    notify(.joinedLoad)
                case .resumeCancelled(let waiter):
                    waiter.resume(throwing: CancellationError())
                case .startLoad(let loadID, let recheckTiers):
                    let task = start(loadID, recheckTiers)
                    switch handle({ $0.attach(task, toLoad: loadID) }) {
                    case .none: break
                    case .cancelTask: task.cancel()
                    }
                }
            }
        } onCancel: {
            switch handle({ $0.cancelWaiter(waiterID) }) {
            case .none:
                break
            case .resumeCancelled(let waiter, let task):
                waiter.resume(throwing: CancellationError())
                task?.cancel()
            }
        }
    }

    /// Runs `write`, which stores the value of load `loadID` in the tiers, unless the load was fenced or
    /// abandoned, its key changed since it was registered, or a write, removal or other store of the key is
    /// running; a write or removal that begins while `write` runs waits for it.
    ///
    /// - Returns: What `write` returned, or `nil` when the value is not to be stored.
    package func storeLoadedValue<Result>(ofLoad loadID: UInt64, _ write: () async -> Result) async -> Result? {
        await store(handle { $0.beginStoringLoad(loadID) }, write)
    }

    /// Ends load `loadID` and answers every caller still waiting for it with `result`.
    package func finishLoad(_ loadID: UInt64, with result: Result<Value, any Error>) {
        switch handle({ $0.finishLoad(loadID) }) {
        case .none:
            break
        case .resumeWaiters(let waiters):
            for waiter in waiters { waiter.resume(with: result) }
        }
    }

    // MARK: - Writes and removals

    /// Runs `body`, a write or removal of `key` (of every key when `nil`), fenced: loads of the key in
    /// flight will not store their results, reads in flight drop their write-back, stores that had already
    /// begun are waited for before `body` runs, and no store of the key begins until `body` has returned or
    /// thrown.
    ///
    /// - Throws: What `body` threw.
    package func fenced<Result>(_ key: Key?, _ body: () async throws -> Result) async rethrows -> Result {
        if case .waitForStores(let stores) = handle({ $0.beginMutation(of: key) }) {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                switch handle({ $0.waitForStores(stores, continuation: continuation) }) {
                case .resume(let mutation): mutation.resume()
                case .parked: notify(.parkedMutation)
                }
            }
        }
        defer { handle { $0.endMutation(of: key) } }
        return try await body()
    }

    // MARK: - Stores

    /// Carries out a store's action: runs `write` and ends the store, or skips it.
    private func store<Result>(_ action: Machine.StoreAction, _ write: () async -> Result) async -> Result? {
        switch action {
        case .skip:
            return nil
        case .store(let storeID):
            let result = await write()
            switch handle({ $0.endStore(storeID) }) {
            case .none: break
            case .resumeMutations(let mutations): for mutation in mutations { mutation.resume() }
            }
            return result
        }
    }

    // MARK: - Counters and events

    /// Callers that joined a load another caller had started.
    package var sharedJoins: Int { machine.withLock { $0.sharedJoins } }

    /// Loader calls run.
    package var loads: Int { machine.withLock { $0.loadsRun } }

    /// Sets the closure told of ``CoordinatorEvent``s, replacing any earlier one; for tests, which wait for
    /// these moments instead of polling counters. It runs outside the lock, on the task of the event.
    package func observe(_ observer: (@Sendable (CoordinatorEvent) -> Void)?) {
        eventObserver.withLock { $0 = observer }
    }

    /// Tells the observer, if any, of `event`.
    func notify(_ event: CoordinatorEvent) {
        eventObserver.withLock { $0 }?(event)
    }
}

/// The bookkeeping behind load-once, and the fences that keep stale data out of the tiers, as a pure value.
///
/// Nothing here locks, suspends, resumes a continuation, starts or cancels a task: each mutating method
/// changes the state and returns what its caller must do next (resume these waiters, cancel that task,
/// start a load). ``MultiCache`` keeps one instance inside a `Locked` and carries out the returned actions
/// after the lock is released, so no continuation is ever resumed and no user code ever runs under the
/// lock. The shape follows swift-async-algorithms' `ChannelStateMachine`.
///
/// Three things are tracked:
/// - **Loads.** Every load in flight has an id, its waiters (one continuation each) and, once started,
///   its task. `currentLoad` maps a key to the load a new caller should join; a load that has been fenced
///   is detached from its key (so the next caller starts a fresh one) but still answers its own waiters.
/// - **Stores.** A write-back or the storing of a loaded value registers here once it has passed its
///   fence check and unregisters when its tier writes are done.
/// - **Mutations.** A write or removal fences what is in flight (it bumps ``mutationEpoch`` and marks the
///   key's loads as fenced), then waits for the stores that had already passed their check, so a store
///   can never land after the removal that should have erased it.
///
/// It is generic over what it parks so that it stays a plain value its tests can drive with stand-ins:
/// ``MultiCache`` uses a `CheckedContinuation<Value, any Error>` per waiter, a
/// `CheckedContinuation<Void, Never>` per parked mutation and a `Task<Void, Never>` per load.
struct LoadOnceStateMachine<Key: Hashable, Waiter, MutationWaiter, LoadTask> {
    private struct Load {
        var key: Key
        var waiters: [UInt64: Waiter]
        var task: LoadTask?
        /// Set by a write or removal of `key` that began during the load: its result must not be stored.
        var isFenced = false
    }

    private struct PendingMutation {
        var stores: Set<UInt64>
        var continuation: MutationWaiter
    }

    private var loads: [UInt64: Load] = [:]
    private var currentLoad: [Key: UInt64] = [:]
    private var loadOfWaiter: [UInt64: UInt64] = [:]
    private var activeStores: [UInt64: Key] = [:]
    private var pendingMutations: [UInt64: PendingMutation] = [:]
    /// Writes and removals still working through the tiers, per key and for `removeAll`.
    private var mutationsUnderWay: [Key: Int] = [:]
    private var wipesUnderWay = 0
    private var lastID: UInt64 = 0

    /// Bumped whenever a load finishes. A caller remembers it before its read; when it changed by the time
    /// the caller starts a load, a load may have stored the key in between, so the new load reads the tiers
    /// again before it runs the loader.
    private(set) var finishedLoads: UInt64 = 0
    /// Bumped by every write, removal and stored load. A read remembers it; its write-back is dropped when it
    /// changed, because the entry it read may no longer be the newest one.
    private(set) var mutationEpoch: UInt64 = 0
    /// Callers that joined a load another caller had started.
    private(set) var sharedJoins = 0

    /// Writes and removals parked until stores already under way end (for tests).
    var parkedMutationCount: Int { pendingMutations.count }

    /// Returns a fresh id for a waiter, load or store.
    mutating func makeID() -> UInt64 {
        lastID &+= 1
        return lastID
    }

    // MARK: - Waiters

    /// What a caller that missed in every tier does next.
    enum JoinAction {
        /// Start the load's task; when `recheckTiers`, read the tiers once more before running the loader.
        case startLoad(loadID: UInt64, recheckTiers: Bool)
        /// The caller joined a load in flight; its continuation is resumed when the load finishes.
        case wait
        /// The caller's task was cancelled before it joined: resume it with `CancellationError` now.
        case resumeCancelled(Waiter)
    }

    /// Registers `continuation` as a waiter for `key`'s load, starting one when none is in flight.
    ///
    /// - Parameters:
    ///   - key: The key that missed.
    ///   - waiterID: The caller's id from ``makeID()``.
    ///   - continuation: Resumed with the load's result.
    ///   - finishedLoadsSeen: ``finishedLoads`` as the caller read it before its tier reads.
    ///   - isCancelled: Whether the caller's task is cancelled, read while the lock is held so that a
    ///     cancellation handler running at the same moment cannot be missed.
    mutating func join(
        key: Key,
        waiterID: UInt64,
        continuation: Waiter,
        finishedLoadsSeen: UInt64,
        isCancelled: Bool
    ) -> JoinAction {
        if isCancelled { return .resumeCancelled(continuation) }
        if let loadID = currentLoad[key], loads[loadID] != nil {
            loads[loadID]?.waiters[waiterID] = continuation
            loadOfWaiter[waiterID] = loadID
            sharedJoins += 1
            return .wait
        }
        let loadID = makeID()
        loads[loadID] = Load(key: key, waiters: [waiterID: continuation])
        currentLoad[key] = loadID
        loadOfWaiter[waiterID] = loadID
        return .startLoad(loadID: loadID, recheckTiers: finishedLoads != finishedLoadsSeen)
    }

    /// Records the task that runs load `loadID`.
    ///
    /// - Returns: `true` when every waiter cancelled before the task was recorded: cancel it.
    mutating func attach(_ task: LoadTask, toLoad loadID: UInt64) -> Bool {
        guard loads[loadID] != nil else { return true }
        loads[loadID]?.task = task
        return false
    }

    /// What to do for a waiter whose task was cancelled.
    enum CancelAction {
        /// The waiter had already been answered (or never joined): nothing to do.
        case none
        /// Resume `waiter` with `CancellationError`; cancel `task` too when it is not `nil` (the last waiter
        /// left, so nobody wants the load any more).
        case resumeCancelled(Waiter, cancelling: LoadTask?)
    }

    /// Removes a cancelled waiter; abandons its load when it was the last one.
    mutating func cancelWaiter(_ waiterID: UInt64) -> CancelAction {
        guard let loadID = loadOfWaiter.removeValue(forKey: waiterID),
            var load = loads[loadID],
            let waiter = load.waiters.removeValue(forKey: waiterID)
        else { return .none }
        guard load.waiters.isEmpty else {
            loads[loadID] = load
            return .resumeCancelled(waiter, cancelling: nil)
        }
        // Abandoned: forget it, so the next caller starts a fresh load and this one can never store.
        loads[loadID] = nil
        if currentLoad[load.key] == loadID { currentLoad[load.key] = nil }
        return .resumeCancelled(waiter, cancelling: load.task)
    }

    /// Ends load `loadID` and hands back its waiters, to be resumed with its result.
    mutating func finishLoad(_ loadID: UInt64) -> [Waiter] {
        finishedLoads &+= 1
        guard let load = loads.removeValue(forKey: loadID) else { return [] }
        if currentLoad[load.key] == loadID { currentLoad[load.key] = nil }
        for waiterID in load.waiters.keys { loadOfWaiter[waiterID] = nil }
        return Array(load.waiters.values)
    }

    // MARK: - Stores

    /// Lets load `loadID` store its value unless it was fenced or abandoned.
    ///
    /// - Returns: A store id to pass to ``endStore(_:)`` after the tier writes, or `nil`: do not store.
    mutating func beginStoringLoad(_ loadID: UInt64) -> UInt64? {
        guard let load = loads[loadID], !load.isFenced else { return nil }
        // A stored load is newer than whatever a read in flight may write back.
        mutationEpoch &+= 1
        let storeID = makeID()
        activeStores[storeID] = load.key
        return storeID
    }

    /// Lets a read write its hit back unless a write or removal began after the read did.
    ///
    /// - Parameters:
    ///   - key: The key read.
    ///   - epochSeen: ``mutationEpoch`` as the read saw it before asking the first tier.
    /// - Returns: A store id to pass to ``endStore(_:)``, or `nil`: drop the write-back.
    mutating func beginWriteBack(key: Key, epochSeen: UInt64) -> UInt64? {
        // A read that overlapped a write or removal may have read a tier the mutation had not reached yet:
        // its hit can be older than what the mutation leaves behind, so it is never written back.
        guard epochSeen == mutationEpoch, wipesUnderWay == 0, mutationsUnderWay[key] == nil else { return nil }
        let storeID = makeID()
        activeStores[storeID] = key
        return storeID
    }

    /// Ends store `storeID`.
    ///
    /// - Returns: The writes and removals that were waiting only for this store; resume them.
    mutating func endStore(_ storeID: UInt64) -> [MutationWaiter] {
        activeStores[storeID] = nil
        var ready: [MutationWaiter] = []
        for (id, var pending) in pendingMutations where pending.stores.contains(storeID) {
            pending.stores.remove(storeID)
            if pending.stores.isEmpty {
                pendingMutations[id] = nil
                ready.append(pending.continuation)
            } else {
                pendingMutations[id] = pending
            }
        }
        return ready
    }

    // MARK: - Mutations

    /// Fences everything in flight for `key` (every key when `nil`) before a write or removal.
    ///
    /// Loads of the key are marked so their results are not stored and are detached from the key, so the
    /// next caller starts a new load; reads in flight lose their write-back.
    ///
    /// - Returns: The stores already under way for the key, which the mutation must wait for (through
    ///   ``waitForStores(_:continuation:)``) before it touches the tiers.
    mutating func beginMutation(of key: Key?) -> Set<UInt64> {
        mutationEpoch &+= 1
        if let key {
            mutationsUnderWay[key, default: 0] += 1
            if let loadID = currentLoad.removeValue(forKey: key) { loads[loadID]?.isFenced = true }
            return Set(activeStores.filter { $0.value == key }.keys)
        }
        wipesUnderWay += 1
        for loadID in currentLoad.values { loads[loadID]?.isFenced = true }
        currentLoad.removeAll()
        return Set(activeStores.keys)
    }

    /// Ends a write or removal of `key` (every key when `nil`) once every tier has answered.
    ///
    /// Fences again what started while the mutation was under way: reads in flight lose their write-back
    /// (they may have seen a tier before the mutation reached it), and loads of the key are detached, so a
    /// caller arriving after the mutation returned never joins a load whose re-check read such a tier.
    mutating func endMutation(of key: Key?) {
        mutationEpoch &+= 1
        if let key {
            let remaining = (mutationsUnderWay[key] ?? 1) - 1
            mutationsUnderWay[key] = remaining > 0 ? remaining : nil
            if let loadID = currentLoad.removeValue(forKey: key) { loads[loadID]?.isFenced = true }
            return
        }
        wipesUnderWay = max(wipesUnderWay - 1, 0)
        for loadID in currentLoad.values { loads[loadID]?.isFenced = true }
        currentLoad.removeAll()
    }

    /// Parks a mutation until `stores` have ended.
    ///
    /// - Returns: `continuation` when every store in `stores` has already ended: resume it now; `nil`
    ///   when it was parked and ``endStore(_:)`` will hand it back.
    mutating func waitForStores(_ stores: Set<UInt64>, continuation: MutationWaiter) -> MutationWaiter? {
        let stillActive = stores.filter { activeStores[$0] != nil }
        guard !stillActive.isEmpty else { return continuation }
        pendingMutations[makeID()] = PendingMutation(stores: stillActive, continuation: continuation)
        return nil
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a cache with load-once coordinates between its calls, as a pure value: load-once, the stores of
/// write-backs and loaded values, and the fences that writes and removals put up against them. It lives
/// in CacheCore (package access) so that every cache shares one implementation: `MultiCache` and the
/// load-once of a single `MemoryCache` or `DiskCache`.
///
/// Nothing here locks, suspends, resumes a continuation, starts or cancels a task: each event is one
/// mutating method that changes the state and returns a named action, what its caller must do next
/// (resume these waiters, cancel that task, start a load, store or skip). ``CoordinatorStorage`` is the
/// only owner: it holds the machine behind its lock and carries out the actions after releasing it, so no
/// continuation is ever resumed and no user code ever runs under the lock. The pairing follows
/// swift-async-algorithms' `ChannelStateMachine` and `ChannelStorage`.
///
/// Four things are tracked:
/// - **Loads.** Every load in flight has an id, its waiters (one continuation each) and, once started,
///   its task. `currentLoad` maps a key to the load a new caller should join; a load that a write or
///   removal fenced is detached from its key (so the next caller starts a fresh one) but still answers
///   its own waiters.
/// - **Stores.** A write-back or the storing of a loaded value registers here once it has passed its
///   check and unregisters when its tier writes are done.
/// - **Mutations.** A write or removal registers for as long as it runs: it fences what is in flight
///   (it stamps its key and detaches the key's load), waits for the stores that had already passed
///   their check, touches the tiers, then ends. No store of the key may begin while it is registered.
/// - **Stamps.** ``changeSequence`` is a counter that every change of any key advances. Per key, the
///   machine remembers the stamp of its last change and of its last write or removal, so a caller that
///   noted the sequence before reading the tiers can later ask what happened to *its* key since.
///
/// Together they make each store's check-then-write atomic with respect to writes and removals of its
/// key: a store registers only when no write or removal of the key began since its reader looked and
/// none is running; a write or removal registers before it waits for the stores that got in first. So
/// a store's tier writes never overlap a write's or removal's tier calls, and never land after them.
///
/// It is generic over what it parks so that it stays a plain value its tests can drive with stand-ins:
/// ``CoordinatorStorage`` uses a `CheckedContinuation<Value, any Error>` per waiter, a
/// `CheckedContinuation<Void, Never>` per parked mutation and a `Task<Void, Never>` per load.
struct CoordinatorStateMachine<Key: Hashable, Waiter, MutationWaiter, LoadTask> {
    fileprivate struct Load {
        var key: Key
        var waiters: [UInt64: Waiter]
        var task: LoadTask?
        /// ``changeSequence`` when the load was registered; any change of `key` after it blocks the store.
        var ticket: UInt64
        /// The load must not store its result: a write or removal of `key` ran during the load, or ran
        /// after the miss of the caller that started it (then the load stays joinable: it began after the
        /// write, so its waiters may share it, but the caller's call was in flight when the write ran).
        var isFenced: Bool
        /// The load runs to its end even when no caller waits for it any more (a background refresh, a load
        /// whose callers timed out, a batch load), so that its value is still stored.
        var keepsRunning = false
    }

    fileprivate struct PendingMutation {
        var stores: Set<UInt64>
        var continuation: MutationWaiter
    }

    fileprivate struct ActiveStore {
        var key: Key
        /// A loaded value (a change of the key) rather than a write-back (a copy of what a tier holds).
        var isLoad: Bool
    }

    private var loads: [UInt64: Load] = [:]
    private var currentLoad: [Key: UInt64] = [:]
    private var loadOfWaiter: [UInt64: UInt64] = [:]
    private var activeStores: [UInt64: ActiveStore] = [:]
    private var storingKeys: [Key: Int] = [:]
    private var pendingMutations: [UInt64: PendingMutation] = [:]
    private var mutatingKeys: [Key: Int] = [:]
    private var activeWipes = 0
    private var lastID: UInt64 = 0
    /// Failed fail-safe loads per key: until when callers serve the stale value, and the change sequence
    /// at the failure (a write or removal after it ends the throttle).
    private var throttles: [Key: (until: Date, sequence: UInt64)] = [:]
    /// The cache is gone: no background load may start.
    private var isShutDown = false

    /// Stamp of the last change (write, removal, stored load) per key; keys absent changed at most at
    /// `changeFloor`.
    private var lastChange: [Key: UInt64] = [:]
    private var changeFloor: UInt64 = 0
    /// Stamp of the last write or removal (their start and their end) per key; keys absent were written
    /// at most at `mutationFloor`.
    private var lastMutation: [Key: UInt64] = [:]
    private var mutationFloor: UInt64 = 0
    /// How many keys each stamp table keeps before it is cleared and its floor raised to now. Clearing
    /// only makes the answers more cautious (callers in flight see a change they may not have had), so
    /// the tables stay bounded without tracking who still holds an old sequence number.
    private let stampLimit: Int

    /// The change sequence: advanced by the start and end of every write and removal, and of every store
    /// of a loaded value. A read notes it before asking the first tier and passes it to
    /// ``beginWriteBack(key:sequenceSeen:)``; a load-once caller notes it too and passes it to
    /// ``join(key:waiterID:continuation:sequenceSeen:isCancelled:)``.
    private(set) var changeSequence: UInt64 = 0
    /// Callers that joined a load another caller had started.
    private(set) var sharedJoins = 0
    /// Loader calls run (counted by ``countLoad()``).
    private(set) var loadsRun = 0

    /// Writes and removals parked until stores already under way end (for tests).
    var parkedMutationCount: Int { pendingMutations.count }

    /// Creates an empty machine.
    ///
    /// - Parameter stampLimit: Keys each stamp table remembers before it starts afresh (see the type's
    ///   discussion); small values serve tests.
    init(stampLimit: Int = 1_024) {
        self.stampLimit = max(1, stampLimit)
    }

    /// Counts a run of a loader.
    mutating func countLoad() { loadsRun += 1 }

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
    /// A load in flight is joined whatever happened since the caller's read: it is either younger than
    /// every write or removal of the key (older ones detached it) or fenced already. A new load reads the
    /// tiers again first when the key changed since the caller's read, since its miss may be stale; and
    /// when a write or removal of the key began since that read, or was running during it, the new load
    /// does not store its result, because the caller's call was in flight when the write or removal ran.
    ///
    /// - Parameters:
    ///   - key: The key that missed.
    ///   - waiterID: The caller's id from ``makeID()``.
    ///   - continuation: Resumed with the load's result.
    ///   - sequenceSeen: ``changeSequence`` as the caller noted it before its tier reads.
    ///   - isCancelled: Whether the caller's task is cancelled, read while the lock is held so that a
    ///     cancellation handler running at the same moment cannot be missed.
    mutating func join(
        key: Key,
        waiterID: UInt64,
        continuation: Waiter,
        sequenceSeen: UInt64,
        isCancelled: Bool
    ) -> JoinAction {
        if isCancelled { return .resumeCancelled(continuation) }
        if let loadID = currentLoad[key], loads[loadID] != nil {
            loads[loadID]?.waiters[waiterID] = continuation
            loadOfWaiter[waiterID] = loadID
            sharedJoins += 1
            return .wait
        }
        let written = (lastMutation[key] ?? mutationFloor) > sequenceSeen || isMutating(key)
        let loadID = makeID()
        loads[loadID] = Load(
            key: key, waiters: [waiterID: continuation], task: nil, ticket: changeSequence, isFenced: written)
        currentLoad[key] = loadID
        loadOfWaiter[waiterID] = loadID
        return .startLoad(loadID: loadID, recheckTiers: written || !isQuiet(key, since: sequenceSeen))
    }

    /// What to do with a load's task once it is recorded.
    enum AttachAction: Equatable {
        /// The load has waiters: let the task run.
        case none
        /// Every waiter cancelled before the task was recorded: cancel it.
        case cancelTask
    }

    /// Records the task that runs load `loadID`.
    mutating func attach(_ task: LoadTask, toLoad loadID: UInt64) -> AttachAction {
        guard loads[loadID] != nil, !isShutDown else { return .cancelTask }
        loads[loadID]?.task = task
        return .none
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
        guard load.waiters.isEmpty, !load.keepsRunning else {
            loads[loadID] = load
            return .resumeCancelled(waiter, cancelling: nil)
        }
        // Abandoned: forget it, so the next caller starts a fresh load and this one can never store.
        loads[loadID] = nil
        if currentLoad[load.key] == loadID { currentLoad[load.key] = nil }
        return .resumeCancelled(waiter, cancelling: load.task)
    }

    /// What to do when a load has its result.
    enum FinishAction {
        /// Every waiter cancelled and left: nobody to answer.
        case none
        /// Resume these waiters with the load's result.
        case resumeWaiters([Waiter])
    }

    /// Ends load `loadID` and hands back its waiters, to be resumed with its result.
    mutating func finishLoad(_ loadID: UInt64) -> FinishAction {
        guard let load = loads.removeValue(forKey: loadID) else { return .none }
        if currentLoad[load.key] == loadID { currentLoad[load.key] = nil }
        for waiterID in load.waiters.keys { loadOfWaiter[waiterID] = nil }
        return load.waiters.isEmpty ? .none : .resumeWaiters(Array(load.waiters.values))
    }

    // MARK: - Stores

    /// Whether a write-back or the store of a loaded value may write into the tiers.
    enum StoreAction: Equatable {
        /// Write, then end the store with ``endStore(_:)`` and this id.
        case store(storeID: UInt64)
        /// Do not write: the entry may no longer be the newest.
        case skip
    }

    /// Lets load `loadID` store its value unless it was fenced or abandoned, its key changed since the
    /// load was registered, or a write, removal or other store of its key is running.
    ///
    mutating func beginStoringLoad(_ loadID: UInt64) -> StoreAction {
        guard let load = loads[loadID], !load.isFenced, isQuiet(load.key, since: load.ticket) else { return .skip }
        // A stored load is newer than whatever a read in flight may write back.
        stampChange(of: load.key)
        return .store(storeID: registerStore(of: load.key, isLoad: true))
    }

    /// Lets a read write its hit back unless its key changed since the read began, or a write, removal
    /// or other store of the key is running.
    ///
    /// - Parameters:
    ///   - key: The key read.
    ///   - sequenceSeen: ``changeSequence`` as the read saw it before asking the first tier.
    mutating func beginWriteBack(key: Key, sequenceSeen: UInt64) -> StoreAction {
        guard isQuiet(key, since: sequenceSeen) else { return .skip }
        return .store(storeID: registerStore(of: key, isLoad: false))
    }

    /// What to do when a store has written into the tiers.
    enum EndStoreAction {
        /// No write or removal was waiting for this store alone.
        case none
        /// Resume these writes and removals: they were waiting only for this store.
        case resumeMutations([MutationWaiter])
    }

    /// Ends store `storeID`.
    mutating func endStore(_ storeID: UInt64) -> EndStoreAction {
        if let store = activeStores.removeValue(forKey: storeID) {
            Self.decrement(&storingKeys, store.key)
            // A caller that read while the value was on its way must look again rather than load again.
            if store.isLoad { stampChange(of: store.key) }
        }
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
        return ready.isEmpty ? .none : .resumeMutations(ready)
    }

    // MARK: - Mutations

    /// What a write or removal does after it has fenced its key.
    enum FenceAction: Equatable {
        /// No store of the key is under way: touch the tiers now.
        case proceed
        /// Wait for these stores (through ``waitForStores(_:continuation:)``) before touching the tiers.
        case waitForStores(Set<UInt64>)
    }

    /// Registers a write or removal of `key` (of every key when `nil`) and fences what is in flight.
    ///
    /// Loads of the key are marked so their results are not stored and are detached from the key, so the
    /// next caller starts a new load; reads in flight lose their write-back; no store of the key can begin
    /// until ``endMutation(of:)``.
    mutating func beginMutation(of key: Key?) -> FenceAction {
        stampMutation(of: key)
        let stores: Set<UInt64>
        if let key {
            mutatingKeys[key, default: 0] += 1
            if let loadID = currentLoad.removeValue(forKey: key) { loads[loadID]?.isFenced = true }
            stores = Set(activeStores.filter { $0.value.key == key }.keys)
        } else {
            activeWipes += 1
            for loadID in currentLoad.values { loads[loadID]?.isFenced = true }
            currentLoad.removeAll()
            stores = Set(activeStores.keys)
        }
        return stores.isEmpty ? .proceed : .waitForStores(stores)
    }

    /// Ends a write or removal registered by ``beginMutation(of:)``, once its tier calls have returned
    /// (whether they succeeded or not).
    mutating func endMutation(of key: Key?) {
        // Stamped again so a caller that read while it ran sees that its miss may be stale.
        stampMutation(of: key)
        if let key {
            Self.decrement(&mutatingKeys, key)
        } else {
            activeWipes = max(0, activeWipes - 1)
        }
    }

    /// What to do with a write or removal that asked to wait for stores.
    enum ParkAction {
        /// Every store it waited for has ended already: resume it now.
        case resume(MutationWaiter)
        /// It is parked; ``endStore(_:)`` hands it back when the last of its stores ends.
        case parked
    }

    /// Parks a mutation until `stores` have ended.
    mutating func waitForStores(_ stores: Set<UInt64>, continuation: MutationWaiter) -> ParkAction {
        let stillActive = stores.filter { activeStores[$0] != nil }
        guard !stillActive.isEmpty else { return .resume(continuation) }
        pendingMutations[makeID()] = PendingMutation(stores: stillActive, continuation: continuation)
        return .parked
    }

    // MARK: - Background loads, timeouts, batches and fail-safe throttles

    /// What a caller that wants a key refreshed in the background does next.
    enum BackgroundLoadAction: Equatable {
        /// Start the load's task (no caller waits for it); read the tiers again first when `recheckTiers`.
        case startLoad(loadID: UInt64, recheckTiers: Bool)
        /// A load of the key is in flight already (or the cache is gone): nothing to start.
        case none
    }

    /// Registers a load of `key` that no caller waits for (a stale-while-revalidate or refresh-ahead
    /// refresh), unless one is in flight; it is fenced like a joined load (see
    /// ``join(key:waiterID:continuation:sequenceSeen:isCancelled:)``) and runs to its end.
    mutating func beginBackgroundLoad(key: Key, sequenceSeen: UInt64) -> BackgroundLoadAction {
        guard !isShutDown else { return .none }
        if let loadID = currentLoad[key], loads[loadID] != nil { return .none }
        let (loadID, recheckTiers) = registerRunningLoad(of: key, sequenceSeen: sequenceSeen)
        return .startLoad(loadID: loadID, recheckTiers: recheckTiers)
    }

    /// What a batch does for each key it has to load.
    struct BatchPlan {
        /// Keys with no load in flight: the batch registered a load for each, to run in its one loader call.
        var owned: [(key: Key, loadID: UInt64, recheckTiers: Bool)] = []
        /// Keys another caller is loading already: the batch joins those loads.
        var inFlight: [Key] = []
    }

    /// Registers a load for each of `keys` that has none in flight, all run by one batch task (attach it
    /// to each with ``attach(_:toLoad:)``); single-key callers join them like any load.
    mutating func beginBatch(keys: [Key], sequenceSeen: UInt64) -> BatchPlan {
        var plan = BatchPlan()
        for key in keys {
            if let loadID = currentLoad[key], loads[loadID] != nil {
                plan.inFlight.append(key)
            } else {
                let (loadID, recheckTiers) = registerRunningLoad(of: key, sequenceSeen: sequenceSeen)
                plan.owned.append((key, loadID, recheckTiers))
            }
        }
        return plan
    }

    /// Takes waiter `waiterID` off its load without cancelling the load, which now runs to its end (its
    /// value is stored unless fenced); returns the waiter to answer, or `nil` when it was answered already.
    mutating func detachWaiter(_ waiterID: UInt64) -> Waiter? {
        guard let loadID = loadOfWaiter.removeValue(forKey: waiterID),
            let waiter = loads[loadID]?.waiters.removeValue(forKey: waiterID)
        else { return nil }
        loads[loadID]?.keepsRunning = true
        return waiter
    }

    /// Marks the cache as gone and hands back the tasks of loads nobody waits for, to cancel; no background
    /// load starts from now on.
    mutating func shutDown() -> [LoadTask] {
        isShutDown = true
        return loads.values.filter { $0.waiters.isEmpty }.compactMap(\.task)
    }

    /// Remembers that a fail-safe load of `key` failed: until `until`, callers may serve a stale value
    /// without loading, unless the key is written or removed first.
    mutating func throttle(_ key: Key, until: Date) {
        if throttles.count >= stampLimit, throttles[key] == nil {
            throttles = throttles.filter { $0.value.until > until }
            if throttles.count >= stampLimit { throttles.removeAll() }
        }
        throttles[key] = (until, changeSequence)
    }

    /// Whether a fail-safe failure of `key` is still throttling loads at `now`.
    func isThrottled(_ key: Key, at now: Date) -> Bool {
        guard let throttle = throttles[key], now < throttle.until else { return false }
        return (lastMutation[key] ?? mutationFloor) <= throttle.sequence && !isMutating(key)
    }

    /// Registers a load of `key` with no waiter that runs to its end.
    private mutating func registerRunningLoad(of key: Key, sequenceSeen: UInt64) -> (UInt64, Bool) {
        let written = (lastMutation[key] ?? mutationFloor) > sequenceSeen || isMutating(key)
        let loadID = makeID()
        loads[loadID] = Load(
            key: key, waiters: [:], task: nil, ticket: changeSequence, isFenced: written, keepsRunning: true)
        currentLoad[key] = loadID
        return (loadID, written || !isQuiet(key, since: sequenceSeen))
    }

    // MARK: - Stamps (lock held)

    /// Whether `key` is unchanged since the sequence stood at `sequence`, with no write, removal or store of
    /// it running now.
    private func isQuiet(_ key: Key, since sequence: UInt64) -> Bool {
        (lastChange[key] ?? changeFloor) <= sequence && !isMutating(key) && storingKeys[key] == nil
    }

    private func isMutating(_ key: Key) -> Bool {
        activeWipes > 0 || mutatingKeys[key] != nil
    }

    private mutating func stampChange(of key: Key) {
        changeSequence &+= 1
        Self.record(key, at: changeSequence, in: &lastChange, floor: &changeFloor, limit: stampLimit)
    }

    /// Stamps a write or removal, which is a change too; every key when `key` is `nil`.
    private mutating func stampMutation(of key: Key?) {
        changeSequence &+= 1
        guard let key else {
            lastChange.removeAll(keepingCapacity: true)
            lastMutation.removeAll(keepingCapacity: true)
            changeFloor = changeSequence
            mutationFloor = changeSequence
            return
        }
        Self.record(key, at: changeSequence, in: &lastChange, floor: &changeFloor, limit: stampLimit)
        Self.record(key, at: changeSequence, in: &lastMutation, floor: &mutationFloor, limit: stampLimit)
    }

    private static func record(
        _ key: Key, at stamp: UInt64, in stamps: inout [Key: UInt64], floor: inout UInt64, limit: Int
    ) {
        if stamps.count >= limit, stamps[key] == nil {
            stamps.removeAll(keepingCapacity: true)
            floor = stamp
        }
        stamps[key] = stamp
    }

    private mutating func registerStore(of key: Key, isLoad: Bool) -> UInt64 {
        let storeID = makeID()
        activeStores[storeID] = ActiveStore(key: key, isLoad: isLoad)
        storingKeys[key, default: 0] += 1
        return storeID
    }

    private static func decrement(_ counts: inout [Key: Int], _ key: Key) {
        guard let count = counts[key] else { return }
        counts[key] = count > 1 ? count - 1 : nil
    }
}

// Checked by the compiler: a plain value whenever what it stores is `Sendable`, so that the `Locked` that
// guards it is `Sendable` too.
extension CoordinatorStateMachine: Sendable
where Key: Sendable, Waiter: Sendable, MutationWaiter: Sendable, LoadTask: Sendable {}
extension CoordinatorStateMachine.Load: Sendable
where Key: Sendable, Waiter: Sendable, MutationWaiter: Sendable, LoadTask: Sendable {}
extension CoordinatorStateMachine.PendingMutation: Sendable
where Key: Sendable, Waiter: Sendable, MutationWaiter: Sendable, LoadTask: Sendable {}
extension CoordinatorStateMachine.ActiveStore: Sendable
where Key: Sendable, Waiter: Sendable, MutationWaiter: Sendable, LoadTask: Sendable {}

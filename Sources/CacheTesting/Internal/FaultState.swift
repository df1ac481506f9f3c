/// The state of a ``FaultInjectingCache``: which operations fail or are held, and who is waiting.
///
/// A plain struct guarded by one `Locked`; the mutating methods return the continuations to resume, and
/// the caller resumes them after the lock is released, so no waiter ever runs under the lock.
struct FaultState {
    struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    struct Watcher {
        let id: UInt64
        let operation: CacheOperation
        let count: Int
        let continuation: CheckedContinuation<Void, Never>
    }

    /// What a parking call should do once the state has seen it.
    enum ParkAction {
        /// The call is parked; resume these watchers, whose wait is now over.
        case parked(satisfied: [CheckedContinuation<Void, Never>])
        /// The operation was released before the call could park; go on.
        case proceed
        /// The call's task was cancelled before it could park.
        case cancelled
    }

    private var queuedFailures: [CacheOperation: [any Error]] = [:]
    private var permanentFailures: [CacheOperation: any Error] = [:]
    private var heldOperations: Set<CacheOperation> = []
    private var waiters: [CacheOperation: [Waiter]] = [:]
    private var watchers: [Watcher] = []
    /// Calls (and watchers) whose task was cancelled before they parked; they must not park at all.
    private var cancelledBeforeParking: Set<UInt64> = []
    private var nextID: UInt64 = 0
    private var callCounts: [CacheOperation: Int] = [:]

    // MARK: - Failures

    mutating func failNext(_ operation: CacheOperation, with error: any Error, times: Int) {
        guard times > 0 else { return }
        queuedFailures[operation, default: []].append(contentsOf: repeatElement(error, count: times))
    }

    mutating func failAlways(_ operation: CacheOperation, with error: any Error) {
        permanentFailures[operation] = error
    }

    mutating func stopFailing(_ operation: CacheOperation) {
        queuedFailures[operation] = nil
        permanentFailures[operation] = nil
    }

    /// The error the current call of `operation` must throw, if any; consumes one queued failure.
    mutating func takeFailure(for operation: CacheOperation) -> (any Error)? {
        if let error = permanentFailures[operation] { return error }
        guard var queue = queuedFailures[operation], !queue.isEmpty else { return nil }
        let error = queue.removeFirst()
        queuedFailures[operation] = queue.isEmpty ? nil : queue
        return error
    }

    // MARK: - Holding

    /// Counts a call and returns an id for it to park under when the operation is held.
    mutating func beginCall(_ operation: CacheOperation) -> UInt64? {
        callCounts[operation, default: 0] += 1
        guard heldOperations.contains(operation) else { return nil }
        return makeID()
    }

    func callCount(_ operation: CacheOperation) -> Int { callCounts[operation] ?? 0 }

    mutating func hold(_ operation: CacheOperation) {
        heldOperations.insert(operation)
    }

    /// Stops holding `operation` and returns the parked calls to resume.
    mutating func release(_ operation: CacheOperation) -> [Waiter] {
        heldOperations.remove(operation)
        return waiters.removeValue(forKey: operation) ?? []
    }

    mutating func park(
        _ id: UInt64, _ operation: CacheOperation, _ continuation: CheckedContinuation<Void, any Error>
    ) -> ParkAction {
        if cancelledBeforeParking.remove(id) != nil { return .cancelled }
        guard heldOperations.contains(operation) else { return .proceed }
        waiters[operation, default: []].append(Waiter(id: id, continuation: continuation))
        return .parked(satisfied: takeSatisfiedWatchers())
    }

    /// Unparks the call `id` when it is parked; otherwise remembers that it must not park.
    mutating func cancel(_ id: UInt64) -> CheckedContinuation<Void, any Error>? {
        for (operation, list) in waiters {
            if let index = list.firstIndex(where: { $0.id == id }) {
                waiters[operation]?.remove(at: index)
                return list[index].continuation
            }
        }
        cancelledBeforeParking.insert(id)
        return nil
    }

    /// Forgets a cancellation that arrived after the call had already been resumed.
    mutating func finishParking(_ id: UInt64) {
        cancelledBeforeParking.remove(id)
    }

    func waitingCount(_ operation: CacheOperation) -> Int { waiters[operation]?.count ?? 0 }

    mutating func makeID() -> UInt64 {
        nextID += 1
        return nextID
    }

    /// Registers a watcher unless `count` calls are already parked or its task was cancelled; returns
    /// whether it was registered.
    mutating func watch(
        _ id: UInt64, _ operation: CacheOperation, count: Int, _ continuation: CheckedContinuation<Void, Never>
    ) -> Bool {
        if cancelledBeforeParking.remove(id) != nil { return false }
        guard waitingCount(operation) < count else { return false }
        watchers.append(Watcher(id: id, operation: operation, count: count, continuation: continuation))
        return true
    }

    /// Removes the watcher `id` when it is registered; otherwise remembers that it must not register.
    mutating func cancelWatcher(_ id: UInt64) -> CheckedContinuation<Void, Never>? {
        if let index = watchers.firstIndex(where: { $0.id == id }) {
            return watchers.remove(at: index).continuation
        }
        cancelledBeforeParking.insert(id)
        return nil
    }

    private mutating func takeSatisfiedWatchers() -> [CheckedContinuation<Void, Never>] {
        var satisfied: [CheckedContinuation<Void, Never>] = []
        var pending: [Watcher] = []
        for watcher in watchers {
            if waitingCount(watcher.operation) >= watcher.count {
                satisfied.append(watcher.continuation)
            } else {
                pending.append(watcher)
            }
        }
        watchers = pending
        return satisfied
    }
}

import CacheCore

/// The state a connection's callers and its I/O thread share, behind one lock: requests queued but not
/// yet taken by the I/O thread, the completions of requests still waiting, the breaker and counters.
///
/// Callers queue and cancel; the I/O thread owns the socket, the decoder and the FIFO of requests in
/// flight. When the connection is idle the I/O thread parks its socket here (``State/parked``) and one
/// caller at a time may borrow it to write its request and read the reply on its own thread
/// (`ConnectionCore+Inline.swift`). Completions always run outside the lock.
final class ConnectionCore: Sendable {
    /// Called once with a request's outcome.
    typealias Completion = @Sendable (Result<RESPValue, any Error>) -> Void

    struct Queued {
        var id: UInt64
        var end: Int  // offset in `outbox` just past this request's bytes
        var queuedAt: ContinuousClock.Instant
    }

    struct State {
        var outbox: [UInt8] = []
        var queued: [Queued] = []
        var completions: [UInt64: Completion] = [:]
        var nextID: UInt64 = 1
        var breaker: CircuitBreaker
        var state: RedisConnection.State = .disconnected
        var lastConnectedAt: ContinuousClock.Instant?
        var statistics = RedisConnection.Statistics()
        var wakePending = false
        var isClosing = false
        var isTerminated = false
        var terminationWaiters: [CheckedContinuation<Void, Never>] = []
        /// The idle connection's socket, lent by the I/O thread; a caller may take it when nothing is queued.
        var parked: SocketSession?
        /// A caller holds the socket for an inline exchange.
        var inlineBusy = false
        /// What a caller gave back to the I/O thread instead of parking it again.
        var handoff: Handoff?
        /// The I/O thread woke while a caller held the socket and waits for it.
        var ioWantsSession = false
        /// The task that borrowed the parked socket since the I/O thread last parked it (0: none yet).
        var inlineCaller = 0
    }

    /// A borrowed socket given back to the I/O thread: with the caller's request when its reply did not
    /// come within the inline wait, and the failure that ended the exchange, if any.
    struct Handoff {
        var session: SocketSession
        var request: Queued?
        var unwritten: ArraySlice<UInt8>
        var writtenAt: ContinuousClock.Instant?
        var failure: ConnectionError?
    }

    let configuration: RedisConnection.Configuration
    let wakePipe: WakePipe
    let origin = ContinuousClock.now
    let locked: Locked<State>

    init(configuration: RedisConnection.Configuration, wakePipe: WakePipe) {
        self.configuration = configuration
        self.wakePipe = wakePipe
        locked = Locked(State(breaker: configuration.breaker))
    }

    /// Time on the breaker's time line.
    func now() -> Duration { origin.duration(to: .now) }

    func withState<Result>(_ body: (inout State) -> Result) -> Result {
        locked.withLock { body(&$0) }
    }

    // MARK: - Callers

    /// Queues `command` and returns its id, or completes at once (open breaker, closed connection, a reply
    /// read inline) and returns `nil`. An open breaker costs one lock and no system call.
    ///
    /// `caller` identifies the calling task (0 when unknown). Only the first task to borrow the parked
    /// socket after the I/O thread parked it borrows it again: another task sending means tasks overlap
    /// (the pool may run ready tasks one after another, so their requests would never be seen together),
    /// and queueing them lets the I/O thread write them in one batch.
    func submit(_ command: RESPCommand, caller: Int = 0, completion: @escaping Completion) -> UInt64? {
        enum Outcome { case queued(UInt64, wake: Bool), refused(ConnectionError), inline(SocketSession, UInt64) }
        let outcome: Outcome = locked.withLock { state in
            if state.isClosing || state.state == .closed {
                return .refused(ConnectionError(.connectionClosed, "the connection was closed"))
            }
            if state.breaker.isOpen {
                state.statistics.rejectedWhileOpen += 1
                return .refused(ConnectionError(.unavailable, "the Redis server is unavailable (circuit breaker open)"))
            }
            let id = state.nextID
            state.nextID += 1
            if let session = state.parked, state.queued.isEmpty,
                caller == 0 || state.inlineCaller == 0 || state.inlineCaller == caller
            {
                if caller != 0 { state.inlineCaller = caller }
                // The I/O thread parks only with nothing in flight and nothing queued, and takes the socket
                // back before it writes anything again: this request is the only one on the wire.
                state.parked = nil
                state.inlineBusy = true
                return .inline(session, id)
            }
            RESPEncoder.encode(command, into: &state.outbox)
            state.queued.append(Queued(id: id, end: state.outbox.count, queuedAt: .now))
            state.completions[id] = completion
            let wake = !state.wakePending
            state.wakePending = true
            if wake { state.statistics.callerSystemCalls += 1 }
            return .queued(id, wake: wake)
        }
        switch outcome {
        case .queued(let id, let wake):
            if wake { wakePipe.wake() }
            return id
        case .refused(let error):
            completion(.failure(error))
            return nil
        case .inline(let session, let id):
            return exchangeInline(command, id: id, on: session, completion: completion)
        }
    }

    /// Completes request `id` with `CancellationError` now; its reply, when it comes, is read and dropped.
    func cancel(_ id: UInt64) {
        let completion = locked.withLock { $0.completions.removeValue(forKey: id) }
        completion?(.failure(CancellationError()))
    }

    /// Stops the I/O thread; everything pending fails with `connectionClosed`.
    func close() {
        let wake = locked.withLock { state in
            let wake = !state.isClosing
            state.isClosing = true
            return wake
        }
        if wake { wakePipe.wake() }
    }

    /// Returns once the I/O thread has closed its socket and exited.
    func waitForTermination() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = locked.withLock { state in
                if state.isTerminated { return true }
                state.terminationWaiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    // MARK: - I/O thread

    /// Marks the I/O thread gone and wakes whoever waits for it.
    func terminated() {
        let waiters = locked.withLock { state in
            state.isTerminated = true
            state.state = .closed
            defer { state.terminationWaiters = [] }
            return state.terminationWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Completes the requests `ids` with `results`, outside the lock; ids already cancelled are skipped.
    func complete(_ outcomes: [(UInt64, Result<RESPValue, any Error>)]) {
        guard !outcomes.isEmpty else { return }
        let completions = locked.withLock { state in
            outcomes.map { state.completions.removeValue(forKey: $0.0) }
        }
        for (completion, outcome) in zip(completions, outcomes) { completion?(outcome.1) }
    }
}

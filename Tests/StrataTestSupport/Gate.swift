internal import CacheCore

/// A one-shot signal between tasks: `wait()` suspends until someone calls `open()`, and returns at once
/// ever after.
///
/// Two uses: a loader waits on one, so a test can hold a load open without sleeping; and a loader opens
/// one when it starts (or ends), so the test waits for that event instead of polling counters. A waiter
/// whose task is cancelled throws `CancellationError`, the way a well-behaved loader honours cancellation,
/// and a test's time limit cancels a wait for an event that never comes, so a broken feature fails the test
/// instead of hanging it.
public final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var lastID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    }

    private let state = Locked(State())

    /// A closed gate.
    public init() {}

    /// Whether ``open()`` has been called.
    public var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Suspends until the gate opens.
    ///
    /// - Throws: `CancellationError` when the waiting task is cancelled first.
    public func wait() async throws {
        let id = state.withLock { state -> UInt64 in
            state.lastID += 1
            return state.lastID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow: Result<Void, any Error>? = state.withLock { state in
                    if state.isOpen { return .success(()) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let resumeNow { continuation.resume(with: resumeNow) }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume(throwing: CancellationError())
        }
    }

    /// Opens the gate for every waiter, now and later.
    public func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }
}

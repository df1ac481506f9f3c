import CacheCore

/// A one-shot gate a loader waits on, so a test can hold a load open without sleeping.
///
/// `wait()` suspends on a continuation until `open()`; a waiter whose task is cancelled throws
/// `CancellationError`, the way a well-behaved loader honours cancellation.
final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var lastID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    }

    private let state = Locked(State())

    /// Suspends until the gate opens.
    func wait() async throws {
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
    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters.removeAll() }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A counter shared between a loader and the test.
final class Counter: Sendable {
    private let count = Locked(0)

    /// Adds one and returns the new count.
    @discardableResult
    func increment() -> Int {
        count.withLock { count in
            count += 1; return count
        }
    }

    /// The current count.
    var value: Int { count.value }
}

/// Collects observer events for assertions.
final class EventLog: Sendable {
    private let events = Locked<[CacheEvent]>([])

    /// The observer to hand to a cache.
    var observer: CacheObserver { { event in self.events.withLock { $0.append(event) } } }

    /// The events seen so far, oldest first.
    var all: [CacheEvent] { events.withLock { $0 } }
}

/// Yields until `condition` holds: for waiting on another task's progress (callers joining a load)
/// without sleeping. Throws `CancellationError` when the test's time limit cancels it, so a broken
/// feature fails the test instead of hanging it.
func waitUntil(_ condition: () -> Bool) async throws {
    while !condition() {
        try Task.checkCancellation()
        await Task.yield()
    }
}

package import CacheCore

/// Counts a load-once coordinator's events (callers joining a load, writes and removals parking), so a
/// test waits for "99 callers have joined" instead of polling `loadsShared`.
///
/// Hand ``observer`` to `CoordinatorStorage.observe(_:)`, then ``wait(for:count:)``. A wait for an event
/// that never comes is ended by the test's time limit, so a broken feature fails the test rather than
/// hanging it.
package final class CoordinatorEventLog: Sendable {
    private struct State {
        var counts: [CoordinatorEvent: Int] = [:]
        var waiters: [(event: CoordinatorEvent, count: Int, gate: Gate)] = []
    }

    private let state = Locked(State())

    /// A log that has seen nothing.
    package init() {}

    /// The closure to give the coordinator.
    package var observer: @Sendable (CoordinatorEvent) -> Void {
        { [self] event in record(event) }
    }

    /// Counts `event` and opens the gates of the waits it satisfies.
    package func record(_ event: CoordinatorEvent) {
        let ready = state.withLock { state -> [Gate] in
            state.counts[event, default: 0] += 1
            let count = state.counts[event, default: 0]
            let ready = state.waiters.filter { $0.event == event && $0.count <= count }.map(\.gate)
            state.waiters.removeAll { $0.event == event && $0.count <= count }
            return ready
        }
        for gate in ready { gate.open() }
    }

    /// How many times `event` happened.
    package func count(of event: CoordinatorEvent) -> Int { state.withLock { $0.counts[event, default: 0] } }

    /// Suspends until `event` has happened `count` times in all.
    ///
    /// - Throws: `CancellationError` when the test's task is cancelled first.
    package func wait(for event: CoordinatorEvent, count: Int) async throws {
        let gate = Gate()
        let isDone = state.withLock { state -> Bool in
            if state.counts[event, default: 0] >= count { return true }
            state.waiters.append((event, count, gate))
            return false
        }
        if !isDone { try await gate.wait() }
    }
}

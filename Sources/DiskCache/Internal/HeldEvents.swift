import CacheCore

/// A store's observer events, delivered at once or, while some work holds them back, when the last hold ends:
/// for work done under a lock an observer calling back into the store would need again (a file lock, the
/// load-once gate), so an observer can never deadlock a store, and never runs while an iOS app holds a file
/// lock in a shared container (Docs/Platforms.md). Both engines use it.
///
/// Thread safety: `Sendable`; its state is behind its own lock, which is never held while the observer runs.
final class HeldEvents: Sendable {
    private struct State {
        var holds = 0
        var events: [CacheEvent] = []
    }

    private let observer: CacheObserver?
    private let state = Locked(State())

    init(observer: CacheObserver?) {
        self.observer = observer
    }

    /// Delivers `event` now, or keeps it for the end of the holds.
    func deliver(_ event: CacheEvent) {
        guard let observer else { return }
        let kept = state.withLock { state -> Bool in
            guard state.holds > 0 else { return false }
            state.events.append(event)
            return true
        }
        if !kept { observer(event) }
    }

    /// Starts a hold; pair it with ``endHold()``.
    func beginHold() {
        state.withLock { $0.holds += 1 }
    }

    /// Ends a hold and, when it was the last, delivers the events kept meanwhile.
    func endHold() {
        let events = state.withLock { state -> [CacheEvent] in
            state.holds -= 1
            guard state.holds == 0 else { return [] }
            defer { state.events = [] }
            return state.events
        }
        for event in events { observer?(event) }
    }

    /// Runs `body` with events held back, then delivers them.
    func holding<T>(_ body: () throws -> T) rethrows -> T {
        beginHold()
        defer { endHold() }
        return try body()
    }
}

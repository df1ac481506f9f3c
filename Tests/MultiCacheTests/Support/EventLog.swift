import CacheCore

/// Collects observer events for assertions.
final class EventLog: Sendable {
    private let events = Locked<[CacheEvent]>([])

    /// The observer to hand to a cache.
    var observer: CacheObserver { { event in self.events.withLock { $0.append(event) } } }

    /// The events seen so far, oldest first.
    var all: [CacheEvent] { events.withLock { $0 } }
}

import CacheCore
import CacheTesting

/// A ``PublishingTier`` that reports its start as the Redis tier does (`InvalidationStartReporting`): the
/// test decides when its first attempt ends.
final class StartingTier<Value: Sendable>: TagRemovingCache, InvalidationStartReporting {
    typealias Key = String

    let publishing: PublishingTier<Value>
    private let waiters = Locked<(started: Bool, calls: [@Sendable () -> Void])>((false, []))

    init(clock: ManualClock) {
        publishing = PublishingTier(clock: clock)
    }

    var clock: any CacheClock { publishing.clock }

    /// Publishes `.all` (unless `publishing` is false), then ends the first attempt, as the tracking
    /// connection does when tracking comes on (or fails to).
    func start(publishing all: Bool = true) {
        if all { publishing.publish(.all) }
        let calls = waiters.withLock { state in
            state.started = true
            defer { state.calls = [] }
            return state.calls
        }
        for call in calls { call() }
    }

    func whenInvalidationsStart(_ started: @escaping @Sendable () -> Void) {
        let now = waiters.withLock { state -> Bool in
            if !state.started { state.calls.append(started) }
            return state.started
        }
        if now { started() }
    }

    func addInvalidationObserver(
        _ observer: @escaping @Sendable (CacheInvalidation<String>) -> Void
    ) -> CacheInvalidationSubscription { publishing.addInvalidationObserver(observer) }

    func entry(forKey key: String) async throws -> CacheEntry<Value>? { try await publishing.entry(forKey: key) }
    func setEntry(_ entry: CacheEntry<Value>, forKey key: String) async throws {
        try await publishing.setEntry(entry, forKey: key)
    }
    func value(forKey key: String) async throws -> Value? { try await valueThroughEntry(forKey: key) }
    func setValue(_ value: Value, forKey key: String, expiry: Expiry? = nil) async throws {
        try await setValueThroughEntry(value, forKey: key, expiry: expiry)
    }
    func removeEntry(forKey key: String) async throws { try await publishing.removeEntry(forKey: key) }
    func removeAll() async throws { try await publishing.removeAll() }
    func removeAll(taggedWith tag: String) async throws { try await publishing.removeAll(taggedWith: tag) }
}

import CacheCore
import CacheTesting

/// A slow-reading tier (see ``SlowReadingTier``) that publishes the invalidations a test hands it, as the
/// Redis tier publishes what its server reports.
final class PublishingTier<Value: Sendable>: TagRemovingCache, CacheInvalidationSource {
    typealias Key = String

    let tier: SlowReadingTier<Value>
    private let observers = Locked<[Int: @Sendable (CacheInvalidation<String>) -> Void]>([:])
    private let nextID = Locked(0)

    init(clock: ManualClock) {
        tier = SlowReadingTier(clock: clock)
    }

    var storage: FaultInjectingCache<String, Value> { tier.storage }
    var latch: FaultInjectingCache<String, Value> { tier.latch }
    var clock: any CacheClock { tier.clock }

    /// Observers registered now.
    var observerCount: Int { observers.withLock { $0.count } }

    /// Calls every observer with `invalidation`, on the caller's thread, as a source does.
    func publish(_ invalidation: CacheInvalidation<String>) {
        for observer in observers.withLock({ Array($0.values) }) { observer(invalidation) }
    }

    func addInvalidationObserver(
        _ observer: @escaping @Sendable (CacheInvalidation<String>) -> Void
    ) -> CacheInvalidationSubscription {
        let id = nextID.withLock { id in
            id += 1
            return id
        }
        observers.withLock { $0[id] = observer }
        return CacheInvalidationSubscription { [observers] in observers.withLock { $0[id] = nil } }
    }

    func entry(forKey key: String) async throws -> CacheEntry<Value>? { try await tier.entry(forKey: key) }
    func setEntry(_ entry: CacheEntry<Value>, forKey key: String) async throws {
        try await tier.setEntry(entry, forKey: key)
    }
    func value(forKey key: String) async throws -> Value? { try await valueThroughEntry(forKey: key) }
    func setValue(_ value: Value, forKey key: String, expiry: Expiry? = nil) async throws {
        try await setValueThroughEntry(value, forKey: key, expiry: expiry)
    }
    func removeEntry(forKey key: String) async throws { try await tier.removeEntry(forKey: key) }
    func removeAll() async throws { try await tier.removeAll() }
    func removeAll(taggedWith tag: String) async throws { try await tier.removeAll(taggedWith: tag) }
}

/// The invalidations a `MultiCache` has applied, with a wait that ends on the next one.
final class AppliedInvalidations: Sendable {
    private let state = Locked<(events: [CacheInvalidation<String>], waiters: [CheckedContinuation<Void, Never>])>(
        ([], []))

    func record(_ invalidation: CacheInvalidation<String>) {
        let waiters = state.withLock { state in
            state.events.append(invalidation)
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    var events: [CacheInvalidation<String>] { state.withLock { $0.events } }

    /// Waits until `count` invalidations have been applied. The test's time limit bounds the wait.
    func wait(forCount count: Int) async {
        while state.withLock({ $0.events.count }) < count {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.events.count >= count { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }
}

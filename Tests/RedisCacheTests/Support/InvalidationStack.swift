import CacheCore
import Foundation
import MemoryCache
import MultiCache

@testable import RedisCache

/// The invalidations a `MultiCache` has applied (removed from the tiers above and unfenced), in order,
/// with waits that end on the event or at a deadline.
final class AppliedLog: Sendable {
    private struct State {
        var events: [CacheInvalidation<String>] = []
        var consumed = 0
        var waiter: CheckedContinuation<Void, Never>?
    }
    private let state = Locked(State())

    func record(_ invalidation: CacheInvalidation<String>) {
        let waiter = state.withLock { state in
            state.events.append(invalidation)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Every event so far.
    var events: [CacheInvalidation<String>] { state.withLock { $0.events } }

    /// Waits for the next event not yet consumed that satisfies `matches` (consuming it and everything
    /// before it); `false` when `timeout` passes first. The default is a hang guard, not a speed bound: under
    /// ThreadSanitizer with the whole suite on 2 cores, a tracking connection's first `.all` took over 10 s.
    func wait(
        timeout: Duration = .seconds(60), _ matches: @escaping @Sendable (CacheInvalidation<String>) -> Bool
    ) async -> Bool {
        await next(timeout: timeout, matches) != nil
    }

    /// Waits for the next event not yet consumed that satisfies `matches` (consuming it and everything
    /// before it) and returns it; `nil` when `timeout` passes first.
    func next(
        timeout: Duration = .seconds(60), _ matches: @escaping @Sendable (CacheInvalidation<String>) -> Bool
    ) async -> CacheInvalidation<String>? {
        let deadline = ContinuousClock.now + timeout
        while true {
            let found = state.withLock { state -> CacheInvalidation<String>? in
                while state.consumed < state.events.count {
                    let event = state.events[state.consumed]
                    state.consumed += 1
                    if matches(event) { return event }
                }
                return nil
            }
            if let found { return found }
            guard ContinuousClock.now < deadline else { return nil }
            // Woken by the next event, or by a timer at the deadline.
            let timer = Task {
                try? await Task.sleep(until: deadline, clock: .continuous)
                self.wake()
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.consumed < state.events.count { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            timer.cancel()
        }
    }

    /// Waits for an applied `.all`.
    func waitForAll(timeout: Duration = .seconds(60)) async -> Bool {
        await wait(timeout: timeout) { if case .all = $0 { return true } else { return false } }
    }

    /// Waits for an applied `.keys` naming `key`.
    func waitForKey(_ key: String, timeout: Duration = .seconds(60)) async -> Bool {
        await wait(timeout: timeout) {
            if case .keys(let keys) = $0 { return keys.contains(key) } else { return false }
        }
    }

    private func wake() {
        let waiter = state.withLock { state in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}

/// `MultiCache([memory, redis])` with its log of applied invalidations.
final class InvalidationStack: Sendable {
    let memory: MemoryCache<String, String>
    let redis: RedisCache<String, String>
    let multi: MultiCache<String, String>
    /// What the `MultiCache` applied (coalesced: an `.all` queued behind another is applied once).
    let log = AppliedLog()
    /// What the Redis tier published, one event per message.
    let published = AppliedLog()
    private let subscription: CacheInvalidationSubscription

    /// - Parameters:
    ///   - port: The data connection's port.
    ///   - trackingPort: The tracking connection's port (a proxy), or `nil` for `port`.
    init(
        port: Int, namespace: String, masterKey: Data, trackingPort: Int? = nil,
        configure: (inout RedisCacheConfiguration) -> Void = { _ in }
    ) throws {
        memory = try MemoryCache(countLimit: 10_000)
        var configuration = try RedisTier.configuration(port: port, namespace: namespace, masterKey: masterKey)
        configuration.trackingPort = trackingPort
        configure(&configuration)
        redis = try RedisCache(configuration: configuration)
        // The first observer: it starts the tracking connection, so it receives exactly one `.all` when
        // tracking is on (a later observer also receives one at once when it registers).
        subscription = redis.addInvalidationObserver { [published] in published.record($0) }
        multi = try MultiCache([memory, redis])
        multi.observeAppliedInvalidations { [log] in log.record($0) }
    }

    /// A stack whose tier reaches `endpoint` (plain TCP or TLS), then applies `configure`.
    convenience init(
        endpoint: RedisEndpoint, namespace: String, masterKey: Data,
        configure: (inout RedisCacheConfiguration) -> Void = { _ in }
    ) throws {
        try self.init(port: endpoint.port, namespace: namespace, masterKey: masterKey) {
            endpoint.configure(&$0)
            configure(&$0)
        }
    }

    /// Waits until tracking is on and every invalidation published so far has been applied (see
    /// ``settle()``).
    func waitUntilTracking() async -> Bool {
        guard await published.waitForAll() else { return false }
        return await settle()
    }

    /// Waits until every write the server executed so far has reached this stack and been applied: a
    /// marker key written through this tier comes back as an invalidation after every earlier push (they
    /// arrive in order), and applied invalidations are recorded in order, so once the marker's is
    /// applied the earlier ones were too (and are consumed). A marker covered by an `.all` still queued
    /// in the `MultiCache` comes back as that `.all`; then another marker is written.
    ///
    /// Tests call it after another client wrote keys this stack is about to read: otherwise the push of
    /// that write could arrive after the read named the key, and drop the copy the test expects.
    func settle() async -> Bool {
        for _ in 0..<10 {
            let marker = "marker-\(UUID().uuidString)"
            guard (try? await redis.setValue("m", forKey: marker)) != nil else { return false }
            let event = await log.next { event in
                switch event {
                case .keys(let keys): return keys.contains(marker)
                case .all: return true
                case .tags: return false
                }
            }
            guard let event else { return false }
            if case .keys = event { return true }
        }
        return false
    }
}

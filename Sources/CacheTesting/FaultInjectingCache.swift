import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A cache that fails or holds calls on demand, per operation, so tests can drive the error and
/// timing paths of code that uses a cache.
///
/// It wraps another cache (``init(wrapping:)``) or, by default, keeps entries in a simple unlimited
/// in-memory store that honours expiry on the given clock (``init(clock:)``). Calls that neither fail
/// nor are held go straight to that storage.
///
/// - **Failing.** ``failNext(_:with:times:)`` makes the next calls of an operation throw,
///   ``failAlways(_:with:)`` makes every call throw until ``stopFailing(_:)``. A failing call throws
///   without reaching the storage, so nothing changes.
/// - **Holding.** ``hold(_:)`` makes calls of an operation suspend (without sleeping, on a
///   continuation) until ``release(_:)``; ``waitUntilHeld(_:count:)`` lets a test wait until a call
///   is parked, so it can act while the call is in flight. A held call decides whether to fail when it
///   is released, so a test can hold a call, arrange a failure, then release it. A parked call whose
///   task is cancelled throws `CancellationError`.
///
/// ```swift
/// let cache = FaultInjectingCache<String, Data>(clock: ManualClock())
/// cache.hold(.entry)
/// let read = Task { try await cache.value(forKey: "a") }   // parks inside the cache
/// await cache.waitUntilHeld(.entry)                        // deterministic: no sleeping
/// cache.failNext(.entry, with: CacheError(.io, "disk gone"))
/// cache.release(.entry)
/// await #expect(throws: CacheError.self) { try await read.value }
/// ```
///
/// Thread-safe: every method may be called from any thread or task. State sits behind one lock, which
/// is never held while a parked call is resumed or the wrapped cache is called.
public final class FaultInjectingCache<Key: Hashable & Sendable, Value: Sendable>: StaleRetainingCache,
    TagRemovingCache
{
    /// The operations that can be failed or held.
    public typealias Operation = CacheOperation

    /// The storage calls go to when they are neither failed nor held.
    public let base: any Cache<Key, Value>
    private let state = Locked(FaultState())

    /// Creates a fault-injecting cache in front of `base`.
    ///
    /// - Parameter base: The cache that calls reach when they are not failed; its clock is this cache's
    ///   clock.
    public init(wrapping base: any Cache<Key, Value>) {
        self.base = base
    }

    /// Creates a fault-injecting cache over its own unlimited in-memory storage.
    ///
    /// - Parameter clock: The clock that decides expiry; the system clock by default. Pass a
    ///   ``ManualClock`` to test expiry without sleeping.
    public init(clock: any CacheClock = SystemClock()) {
        self.base = InMemoryCache(clock: clock)
    }

    /// The clock of the underlying storage.
    public var clock: any CacheClock { base.clock }

    // MARK: - Failing

    /// Makes the next `times` calls of `operation` throw `error`, after any failures already queued.
    ///
    /// - Parameters:
    ///   - operation: The operation to fail.
    ///   - error: What those calls throw; an injected ``CacheError/Code/io`` error by default.
    ///   - times: How many calls fail (a count); zero or less queues nothing.
    /// - Complexity: O(`times`): each queued failure is stored on its own, so prefer
    ///   ``failAlways(_:with:)`` for a failure without end.
    public func failNext(
        _ operation: Operation, with error: any Error = CacheError(.io, "injected failure"), times: Int = 1
    ) {
        state.withLock { $0.failNext(operation, with: error, times: times) }
    }

    /// Makes every call of `operation` throw `error` until ``stopFailing(_:)``.
    ///
    /// While it is in force, failures queued with ``failNext(_:with:times:)`` wait, unconsumed.
    ///
    /// - Parameters:
    ///   - operation: The operation to fail.
    ///   - error: What the calls throw; an injected ``CacheError/Code/io`` error by default.
    public func failAlways(_ operation: Operation, with error: any Error = CacheError(.io, "injected failure")) {
        state.withLock { $0.failAlways(operation, with: error) }
    }

    /// Ends every failure set up for `operation`, queued or permanent.
    ///
    /// - Parameter operation: The operation that should succeed again.
    /// - Complexity: O(1) plus releasing the queued failures.
    public func stopFailing(_ operation: Operation) {
        state.withLock { $0.stopFailing(operation) }
    }

    // MARK: - Holding

    /// Makes calls of `operation` suspend until ``release(_:)``.
    ///
    /// Calls already past the hold are not affected.
    ///
    /// - Parameter operation: The operation to hold.
    public func hold(_ operation: Operation) {
        state.withLock { $0.hold(operation) }
    }

    /// Stops holding `operation` and resumes every call parked on it, in the order they arrived.
    ///
    /// - Parameter operation: The operation to release.
    /// - Complexity: O(n) in the number of parked calls.
    public func release(_ operation: Operation) {
        let waiters = state.withLock { $0.release(operation) }
        for waiter in waiters { waiter.continuation.resume() }
    }

    /// The number of calls of `operation` parked now.
    ///
    /// - Parameter operation: The operation to count.
    /// - Returns: How many calls wait for ``release(_:)``.
    /// - Complexity: O(1).
    public func waitingCount(_ operation: Operation) -> Int {
        state.withLock { $0.waitingCount(operation) }
    }

    /// Suspends until at least `count` calls of `operation` are parked.
    ///
    /// Returns at once when they already are. It waits on a continuation, never by sleeping or polling.
    /// When the calling task is cancelled (for example by a test's time limit) it returns early, so check
    /// ``waitingCount(_:)`` afterwards if that matters.
    ///
    /// - Parameters:
    ///   - operation: The held operation.
    ///   - count: The number of parked calls to wait for (a count of calls); 1 by default.
    /// - Complexity: O(1) to register; returns when the calls park, not after a delay.
    public func waitUntilHeld(_ operation: Operation, count: Int = 1) async {
        let id = state.withLock { $0.makeID() }
        defer { state.withLock { $0.finishParking(id) } }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let registered = state.withLock { $0.watch(id, operation, count: count, continuation) }
                if !registered { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.cancelWatcher(id) }?.resume()
        }
    }

    /// The number of calls of `operation` made so far, including failed and parked ones.
    ///
    /// - Parameter operation: The operation to count.
    /// - Returns: The number of calls since the cache was created.
    /// - Complexity: O(1).
    public func callCount(_ operation: Operation) -> Int {
        state.withLock { $0.callCount(operation) }
    }

    // MARK: - Cache

    /// Reads through to the storage, unless reads are failed or held.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The live entry, or `nil` on a miss.
    /// - Throws: The injected error when ``CacheOperation/entry`` is failed; `CancellationError` when the
    ///   task is cancelled while parked; otherwise what the storage throws.
    /// - Complexity: Two short lock operations, plus the wait while held and what the storage costs.
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        try await admit(.entry)
        return try await base.entry(forKey: key)
    }

    /// Reads through to the storage's fresh-or-stale read (a plain read when the storage keeps no stale
    /// entries), unless reads are failed or held: faulted, held and counted as ``CacheOperation/entry``.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The fresh or stale entry, or `nil`.
    /// - Throws: What ``entry(forKey:)`` throws.
    /// - Complexity: That of ``entry(forKey:)``.
    public func entryIncludingStale(forKey key: Key) async throws -> CacheEntry<Value>? {
        try await admit(.entry)
        return try await base.entryIncludingStaleIfRetained(forKey: key)
    }

    /// Writes through to the storage, unless writes are failed or held.
    ///
    /// - Parameters:
    ///   - entry: The entry to store.
    ///   - key: The key to store it under.
    /// - Throws: The injected error when ``CacheOperation/setEntry`` is failed; `CancellationError`
    ///   when the task is cancelled while parked; otherwise what the storage throws.
    /// - Complexity: Two short lock operations, plus the wait while held and what the storage costs.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) async throws {
        try await admit(.setEntry)
        try await base.setEntry(entry, forKey: key)
    }

    /// Reads the live value for `key` through ``entry(forKey:)`` (so it is recorded and faulted as one).
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value, or `nil` on a miss.
    /// - Throws: What ``entry(forKey:)`` throws.
    /// - Complexity: That of ``entry(forKey:)``.
    public func value(forKey key: Key) async throws -> Value? {
        try await valueThroughEntry(forKey: key)
    }

    /// Stores `value` through ``setEntry(_:forKey:)`` (so it is recorded and faulted as one), with
    /// `expiry` resolved against ``clock`` now.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - expiry: When it expires; `nil` for `.never`.
    /// - Throws: What ``setEntry(_:forKey:)`` throws.
    /// - Complexity: That of ``setEntry(_:forKey:)``.
    public func setValue(_ value: Value, forKey key: Key, expiry: Expiry? = nil) async throws {
        try await setValueThroughEntry(value, forKey: key, expiry: expiry)
    }

    /// Removes `key` from the storage, unless removals are failed or held.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: The injected error when ``CacheOperation/removeEntry`` is failed; `CancellationError`
    ///   when the task is cancelled while parked; otherwise what the storage throws.
    /// - Complexity: Two short lock operations, plus the wait while held and what the storage costs.
    public func removeEntry(forKey key: Key) async throws {
        try await admit(.removeEntry)
        try await base.removeEntry(forKey: key)
    }

    /// Empties the storage, unless wipes are failed or held.
    ///
    /// - Throws: The injected error when ``CacheOperation/removeAll`` is failed; `CancellationError` when
    ///   the task is cancelled while parked; otherwise what the storage throws.
    /// - Complexity: Two short lock operations, plus the wait while held and what the storage costs.
    public func removeAll() async throws {
        try await admit(.removeAll)
        try await base.removeAll()
    }

    /// Removes the entries tagged `tag` from the storage, unless wipes are failed or held (a tag removal
    /// is faulted as ``CacheOperation/removeAll``).
    ///
    /// - Parameter tag: The tag to remove.
    /// - Throws: The injected error when ``CacheOperation/removeAll`` is failed; `CancellationError` when
    ///   the task is cancelled while parked; `CacheError` `.invalidArgument` when the wrapped cache cannot
    ///   remove by tag (it is not a `TagRemovingCache`); otherwise what the storage throws.
    /// - Complexity: Two short lock operations, plus the wait while held and what the storage costs.
    public func removeAll(taggedWith tag: String) async throws {
        try await admit(.removeAll)
        try await tagRemovingBase().removeAll(taggedWith: tag)
    }

    // MARK: - Internals

    /// Counts the call, parks it while its operation is held, then throws an injected failure if any.
    private func admit(_ operation: Operation) async throws {
        if let id = state.withLock({ $0.beginCall(operation) }) {
            try await park(id, operation)
        }
        if let error = state.withLock({ $0.takeFailure(for: operation) }) {
            throw error
        }
    }

    private func park(_ id: UInt64, _ operation: Operation) async throws {
        defer { state.withLock { $0.finishParking(id) } }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let action = state.withLock { $0.park(id, operation, continuation) }
                switch action {
                case .parked(let satisfied):
                    for watcher in satisfied { watcher.resume() }
                case .proceed:
                    continuation.resume()
                case .cancelled:
                    continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            state.withLock { $0.cancel(id) }?.resume(throwing: CancellationError())
        }
    }
}

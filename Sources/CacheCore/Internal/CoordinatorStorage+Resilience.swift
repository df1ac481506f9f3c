#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CoordinatorStorage {
    /// The load-once read with `LoadOptions` that every cache shares (Docs/Loading.md draws each
    /// behaviour): serves a fresh hit (starting a refresh-ahead when it is late in its lifetime), serves a
    /// stale entry within the stale-while-revalidate grace while one background refresh runs, serves a
    /// stale entry without loading while a fail-safe failure throttles the key or while a process holds the
    /// key's lease (`isLeased`), and otherwise joins the key's load with the options' timeouts, falling back
    /// on the stale entry when the load fails under fail-safe.
    ///
    /// - Parameters:
    ///   - key: The key to read.
    ///   - options: The caller's options; checked here, for every cache (``LoadOptions/validate()``).
    ///   - clock: The cache's clock: staleness, throttles and timeouts are measured on it.
    ///   - expiry: The loaded value's expiry, for refresh-ahead (see ``LoadOptions/isRefreshAheadDue(expiresAt:now:expiry:)``).
    ///   - read: The cache's read of `key`, fresh or stale; `nil` on a miss.
    ///   - recheck: The read a load makes before its loader when the key changed since the caller's read;
    ///     fresh entries only; `nil` on a miss or a failure.
    ///   - load: The caller's loader.
    ///   - store: Stores a loaded value, given the load's id; must hold the cache weakly, since a background
    ///     refresh may outlive every caller.
    ///   - isLeased: Whether a process holds the lease on loading `key` (`LoadLeasingCache`), asked only when
    ///     fail-safe could serve the stale entry found: that caller then serves it rather than wait for the
    ///     load; `nil` when no tier shares loads across processes.
    /// - Throws: ``CacheError/Code/invalidArgument`` for options out of range; what `read` or the load threw
    ///   (unless fail-safe served a stale value);
    ///   ``CacheError/Code/loadTimedOut`` at the hard timeout; `CancellationError` when the caller's task
    ///   is cancelled.
    package func value(
        forKey key: Key,
        options: LoadOptions,
        clock: any CacheClock,
        expiry: Expiry,
        read: () async throws -> CacheEntry<Value>?,
        recheck: @escaping @Sendable () async -> Value?,
        load: @escaping @Sendable () async throws -> Value,
        store: @escaping @Sendable (_ loadID: UInt64, _ value: Value) async -> Void,
        isLeased: (() async -> Bool)? = nil
    ) async throws -> Value {
        try options.validate()
        let sequenceSeen = changeSequence
        let found = try await read()
        let loader = ResilientLoader(
            key: key, failSafe: options.failSafe, clock: clock, recheck: recheck, load: load, store: store)
        guard let found else {
            return try await loadWithFallback(loader, options: options, stale: nil, sequenceSeen: sequenceSeen)
        }
        let now = clock.now
        guard let expiresAt = found.expiresAt, expiresAt <= now else {
            // Fresh. Refresh-ahead: a hit late in its lifetime starts one refresh and returns at once.
            if let expiresAt = found.expiresAt,
                options.isRefreshAheadDue(
                    expiresAt: expiresAt.timeIntervalSinceReferenceDate, now: now.timeIntervalSinceReferenceDate,
                    expiry: expiry)
            {
                startBackgroundLoad(loader, sequenceSeen: sequenceSeen)
            }
            return found.value
        }
        let staleness = now.timeIntervalSince(expiresAt)
        if let grace = options.staleWhileRevalidate, staleness < grace.timeInterval {
            startBackgroundLoad(loader, sequenceSeen: sequenceSeen)
            return found.value
        }
        if let failSafe = options.failSafe, staleness < failSafe.maximumStaleness.timeInterval {
            if handle({ $0.isThrottled(key, at: now) }) { return found.value }
            // Another process (or this one) is loading the key under the lease: waiting for it is what the
            // stale value spares this caller (issue 27: a waiter that holds a fail-safe value serves it).
            if let isLeased, await isLeased() { return found.value }
        }
        return try await loadWithFallback(loader, options: options, stale: found, sequenceSeen: sequenceSeen)
    }

    /// Cancels the loads nobody waits for (background refreshes, loads whose callers timed out) and lets
    /// no new one start: called when the cache that owns this coordinator goes away.
    package func cancelBackgroundLoads() {
        for task in handle({ $0.shutDown() }) { task.cancel() }
    }

    /// Joins the key's load with the options' timeouts; under fail-safe, a failure within the maximum
    /// staleness of `stale` returns `stale`'s value instead.
    private func loadWithFallback(
        _ loader: ResilientLoader, options: LoadOptions, stale: CacheEntry<Value>?, sequenceSeen: UInt64
    ) async throws -> Value {
        do {
            return try await joinLoad(
                of: loader.key, sequenceSeen: sequenceSeen, clock: loader.clock,
                timeouts: Timeouts(options: options, now: loader.clock.now, hasStale: stale != nil),
                stale: stale?.value
            ) { loadID, recheckTiers in
                Task { await self.run(loader, loadID: loadID, recheckTiers: recheckTiers) }
            }
        } catch let error where !(error is CancellationError) {
            guard let failSafe = options.failSafe, let stale, let expiresAt = stale.expiresAt,
                loader.clock.now.timeIntervalSince(expiresAt) < failSafe.maximumStaleness.timeInterval
            else { throw error }
            return stale.value
        }
    }

    /// Starts one background load of the loader's key unless one is in flight.
    private func startBackgroundLoad(_ loader: ResilientLoader, sequenceSeen: UInt64) {
        guard
            case .startLoad(let loadID, let recheckTiers) = handle({
                $0.beginBackgroundLoad(key: loader.key, sequenceSeen: sequenceSeen)
            })
        else { return }
        let task = Task { await self.run(loader, loadID: loadID, recheckTiers: recheckTiers) }
        if case .cancelTask = handle({ $0.attach(task, toLoad: loadID) }) { task.cancel() }
    }

    /// The body of one load's task: read again if needed, run the loader, store, throttle a fail-safe
    /// failure, answer every waiter.
    private func run(_ loader: ResilientLoader, loadID: UInt64, recheckTiers: Bool) async {
        let result: Result<Value, any Error>
        if recheckTiers, let value = await loader.recheck() {
            result = .success(value)
        } else {
            handle { $0.countLoad() }
            do {
                let value = try await loader.load()
                result = .success(value)
                await loader.store(loadID, value)
            } catch {
                result = .failure(error)
                if let failSafe = loader.failSafe, !(error is CancellationError) {
                    // Recorded before the waiters are answered, so no caller can slip in between and load again.
                    let until = loader.clock.now.addingTimeInterval(failSafe.throttle.timeInterval)
                    handle { $0.throttle(loader.key, until: until) }
                }
            }
        }
        finishLoad(loadID, with: result)
        notify(.loadFinished)
    }

    /// Waits for the load of `key` like ``joinLoad(of:sequenceSeen:start:)``, but stops waiting at the
    /// soft timeout (answering with `stale`) or the hard timeout (throwing ``CacheError/Code/loadTimedOut``);
    /// the load then runs on to its end.
    private func joinLoad(
        of key: Key,
        sequenceSeen: UInt64,
        clock: any CacheClock,
        timeouts: Timeouts,
        stale: Value?,
        start: (_ loadID: UInt64, _ recheckTiers: Bool) -> Task<Void, Never>
    ) async throws -> Value {
        guard let deadline = timeouts.deadline else {
            return try await joinLoad(of: key, sequenceSeen: sequenceSeen, start: start)
        }
        let waiterID = handle { $0.makeID() }
        let timer = Locked<Task<Void, Never>?>(nil)
        defer { timer.withLock { $0 }?.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let action = handle {
                    $0.join(
                        key: key, waiterID: waiterID, continuation: continuation,
                        sequenceSeen: sequenceSeen, isCancelled: Task.isCancelled)
                }
                switch action {
                case .wait:
                    notify(.joinedLoad)
                case .resumeCancelled(let waiter):
                    return waiter.resume(throwing: CancellationError())
                case .startLoad(let loadID, let recheckTiers):
                    let task = start(loadID, recheckTiers)
                    if case .cancelTask = handle({ $0.attach(task, toLoad: loadID) }) { task.cancel() }
                }
                // Started only once the waiter is registered, so the timeout always finds it (or finds it
                // answered).
                let answer: Result<Value, any Error> =
                    if timeouts.servesStale, let stale {
                        .success(stale)
                    } else {
                        .failure(CacheError(.loadTimedOut, "the loader did not finish within the hard timeout"))
                    }
                let task = Task {
                    guard (try? await clock.sleep(until: deadline)) != nil else { return }
                    guard let waiter = self.handle({ $0.detachWaiter(waiterID) }) else { return }
                    waiter.resume(with: answer)
                    self.notify(.waiterTimedOut)
                }
                timer.withLock { $0 = task }
            }
        } onCancel: {
            switch handle({ $0.cancelWaiter(waiterID) }) {
            case .none:
                break
            case .resumeCancelled(let waiter, let task):
                waiter.resume(throwing: CancellationError())
                task?.cancel()
            }
        }
    }

    /// When a caller stops waiting for a load, and whether it then serves its stale value.
    struct Timeouts {
        /// The instant the caller stops waiting, or `nil` to wait for the load's end.
        var deadline: Date?
        /// Whether the deadline is the soft timeout (serve the stale value) rather than the hard one (throw).
        var servesStale: Bool

        init(options: LoadOptions, now: Date, hasStale: Bool) {
            let soft = hasStale ? options.softTimeout.map { now.addingTimeInterval($0.timeInterval) } : nil
            let hard = options.hardTimeout.map { now.addingTimeInterval($0.timeInterval) }
            if let soft, hard.map({ soft < $0 }) ?? true {
                (deadline, servesStale) = (soft, true)
            } else {
                (deadline, servesStale) = (hard, false)
            }
        }
    }

    /// What one key's load with options needs, bundled for its task.
    struct ResilientLoader: Sendable {
        let key: Key
        let failSafe: LoadOptions.FailSafe?
        let clock: any CacheClock
        let recheck: @Sendable () async -> Value?
        let load: @Sendable () async throws -> Value
        let store: @Sendable (UInt64, Value) async -> Void
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CoordinatorStorage {
    /// The bulk load-once read with `LoadOptions` that every cache shares: each key is answered as the
    /// single-key read with options would answer it (``value(forKey:options:clock:expiry:read:recheck:load:store:)``),
    /// and every key that must load is loaded in **one** batch, as
    /// ``values(forKeys:read:recheck:loadBatch:store:)`` loads it (Docs/Loading.md, "Bulk loads").
    ///
    /// - A fresh key is returned; one due for refresh-ahead is refreshed in the background.
    /// - A stale key within the stale-while-revalidate grace is returned stale and refreshed in the
    ///   background; one within fail-safe's maximum staleness while a fail-safe failure throttles it is
    ///   returned stale without loading.
    /// - Every other key is loaded in one foreground batch. The caller stops waiting for it at the soft
    ///   timeout when every key of the batch has a stale value (and returns those), or at the hard timeout
    ///   (`.loadTimedOut`); the batch runs on. When the batch fails, fail-safe returns the stale values if
    ///   every key of the batch has one within the maximum staleness, and otherwise the error is thrown. A
    ///   fail-safe failure throttles each key of the batch.
    /// - The background refreshes of one call run as one batch of their own, which no caller waits for.
    ///
    /// - Parameters:
    ///   - keys: The keys to read; duplicates are read and loaded once.
    ///   - options: The caller's options, checked here.
    ///   - clock: The cache's clock: staleness, throttles and timeouts are measured on it.
    ///   - expiry: The loaded values' expiry, for refresh-ahead.
    ///   - read: The cache's bulk read of live entries.
    ///   - readStale: The cache's read of one key fresh or stale, made for keys `read` missed when the
    ///     options can serve a stale value.
    ///   - recheck: The read a key's load makes first when the key changed since the caller's read.
    ///   - loadBatch: The caller's batch loader.
    ///   - store: Stores a loaded value, given its load's id; must hold the cache weakly.
    /// - Returns: The fresh, stale and loaded values by key; keys the loader left out are absent.
    /// - Throws: ``CacheError/Code/invalidArgument`` for options out of range; what `read`, `readStale`,
    ///   `loadBatch` or a joined load threw (unless fail-safe served every key stale);
    ///   ``CacheError/Code/loadTimedOut`` at the hard timeout; `CancellationError`.
    package func values(
        forKeys keys: [Key],
        options: LoadOptions,
        clock: any CacheClock,
        expiry: Expiry,
        read: ([Key]) async throws -> [Key: CacheEntry<Value>],
        readStale: (Key) async throws -> CacheEntry<Value>?,
        recheck: @escaping @Sendable (Key) async -> Value?,
        loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value],
        store: @escaping @Sendable (_ loadID: UInt64, _ key: Key, _ value: Value) async -> Void
    ) async throws -> [Key: Value] {
        try options.validate()
        let unique = Self.distinct(keys)
        let sequenceSeen = changeSequence
        let fresh = try await read(unique)
        let now = clock.now
        var found: [Key: Value] = [:]
        var refresh: [Key] = []
        for (key, entry) in fresh {
            found[key] = entry.value
            if let expiresAt = entry.expiresAt,
                options.isRefreshAheadDue(
                    expiresAt: expiresAt.timeIntervalSinceReferenceDate, now: now.timeIntervalSinceReferenceDate,
                    expiry: expiry)
            {
                refresh.append(key)
            }
        }
        let readsStale = options.staleRetention != nil || options.softTimeout != nil
        var stale: [Key: CacheEntry<Value>] = [:]
        var toLoad: [Key] = []
        for key in unique where fresh[key] == nil {
            guard readsStale, let entry = try await readStale(key) else {
                toLoad.append(key)
                continue
            }
            // Written meanwhile: a fresh hit after all.
            guard let expiresAt = entry.expiresAt, expiresAt <= now else {
                found[key] = entry.value
                continue
            }
            stale[key] = entry
            let staleness = now.timeIntervalSince(expiresAt)
            if let grace = options.staleWhileRevalidate, staleness < grace.timeInterval {
                found[key] = entry.value
                refresh.append(key)
            } else if let failSafe = options.failSafe, staleness < failSafe.maximumStaleness.timeInterval,
                handle({ $0.isThrottled(key, at: now) })
            {
                found[key] = entry.value
            } else {
                toLoad.append(key)
            }
        }
        let throttledBatch = throttling(loadBatch, failSafe: options.failSafe, clock: clock)
        if !refresh.isEmpty {
            startBackgroundBatch(
                refresh, sequenceSeen: sequenceSeen, recheck: recheck, loadBatch: throttledBatch, store: store)
        }
        guard !toLoad.isEmpty else { return found }
        let timeouts = Timeouts(
            options: options, now: clock.now, hasStale: toLoad.allSatisfy { stale[$0] != nil })
        do {
            let loading = toLoad
            let loaded = try await waitForBatch(until: timeouts.deadline, clock: clock) {
                try await self.values(
                    loading: loading, found: [:], sequenceSeen: sequenceSeen, recheck: recheck,
                    loadBatch: throttledBatch, store: store)
            }
            guard let loaded else {
                // The deadline passed first.
                guard timeouts.servesStale else {
                    throw CacheError(.loadTimedOut, "the batch loader did not finish within the hard timeout")
                }
                for key in toLoad { found[key] = stale[key]?.value }
                return found
            }
            return found.merging(loaded) { _, loaded in loaded }
        } catch let error where !(error is CancellationError) {
            let now = clock.now
            for key in toLoad {
                guard let failSafe = options.failSafe, let entry = stale[key], let expiresAt = entry.expiresAt,
                    now.timeIntervalSince(expiresAt) < failSafe.maximumStaleness.timeInterval
                else { throw error }
                found[key] = entry.value
            }
            return found
        }
    }

    /// `loadBatch`, throttling each of its keys when it fails under fail-safe (before its waiters are
    /// answered, so no caller slips in between and loads again).
    private func throttling(
        _ loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value],
        failSafe: LoadOptions.FailSafe?,
        clock: any CacheClock
    ) -> @Sendable ([Key]) async throws -> [Key: Value] {
        guard let failSafe else { return loadBatch }
        return { [weak self] keys in
            do {
                return try await loadBatch(keys)
            } catch {
                if !(error is CancellationError) {
                    let until = clock.now.addingTimeInterval(failSafe.throttle.timeInterval)
                    self?.handle { machine in for key in keys { machine.throttle(key, until: until) } }
                }
                throw error
            }
        }
    }

    /// Starts one batch that no caller waits for, loading each of `keys` that has no load in flight.
    private func startBackgroundBatch(
        _ keys: [Key],
        sequenceSeen: UInt64,
        recheck: @escaping @Sendable (Key) async -> Value?,
        loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value],
        store: @escaping @Sendable (UInt64, Key, Value) async -> Void
    ) {
        var owned: [OwnedLoad] = []
        for key in keys {
            if case .startLoad(let loadID, let recheckTiers) = handle({
                $0.beginBackgroundLoad(key: key, sequenceSeen: sequenceSeen)
            }) {
                owned.append(OwnedLoad(key: key, loadID: loadID, recheckTiers: recheckTiers))
            }
        }
        guard !owned.isEmpty else { return }
        // A constant for the task to take: the ThreadSanitizer build refused to send the variable.
        let batch = owned
        let task = Task { _ = await self.runBatch(batch, recheck: recheck, loadBatch: loadBatch, store: store) }
        // Recorded with each of its loads, so that the cache's going away cancels it.
        for load in batch {
            if case .cancelTask = handle({ $0.attach(task, toLoad: load.loadID) }) { task.cancel() }
        }
    }

    /// Runs `work` on a task of its own and returns its result, or `nil` when `deadline` passes first (the
    /// work then runs on); without a deadline, just runs it.
    private func waitForBatch(
        until deadline: Date?,
        clock: any CacheClock,
        _ work: @escaping @Sendable () async throws -> [Key: Value]
    ) async throws -> [Key: Value]? {
        guard let deadline else { return try await work() }
        let task = Task { try await work() }
        let pending = Locked<CheckedContinuation<Result<[Key: Value], any Error>?, Never>?>(nil)
        let timer = Locked<Task<Void, Never>?>(nil)
        let answer: @Sendable (Result<[Key: Value], any Error>?) -> Void = { outcome in
            pending.withLock { continuation in
                defer { continuation = nil }
                return continuation
            }?.resume(returning: outcome)
        }
        let outcome = await withCheckedContinuation { continuation in
            pending.withLock { $0 = continuation }
            Task { answer(await task.result) }
            let sleeper = Task {
                guard (try? await clock.sleep(until: deadline)) != nil else { return }
                answer(nil)
                self.notify(.waiterTimedOut)
            }
            timer.withLock { $0 = sleeper }
        }
        timer.withLock { $0 }?.cancel()
        try Task.checkCancellation()
        return try outcome?.get()
    }
}

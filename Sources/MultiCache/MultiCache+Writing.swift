import CacheCore
import Foundation

extension MultiCache {
    /// Stores `entry` under `key` in every tier, concurrently.
    ///
    /// Each tier's copy keeps the entry's absolute expiry and cost, capped by the tier's
    /// ``Tier/maximumLifetime``. Loads of `key` in flight are fenced: their results are not stored over
    /// this entry. Waits first for write-backs of `key` that were already under way.
    ///
    /// - Parameters:
    ///   - entry: The value with its absolute expiry and optional cost.
    ///   - key: The key to store it under.
    /// - Throws: ``CacheError/Code/tierFailure`` naming each tier that threw (index, name, cause); the other
    ///   tiers hold the new entry, and each failed tier is asked, best effort, to drop its old one. A tier
    ///   that throws `CancellationError` is reported as a failed tier too.
    /// - Complexity: One write per tier, concurrently; the call takes as long as the slowest tier.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) async throws {
        await fence(key)
        defer { endMutation(of: key) }
        let now = clock.now
        let failures = await forEachTier(in: tiers.indices) { tier in
            try await tier.cache.setEntry(tier.capping(entry, now: now), forKey: key)
        }
        guard !failures.isEmpty else { return }
        // A tier that kept its old entry would serve a value older than the other tiers now hold.
        for failure in failures {
            try? await tiers[failure.index].cache.removeEntry(forKey: key)
        }
        try throwIfFailed(failures, "store the entry")
    }

    /// Removes the entry for `key` from every tier, concurrently.
    ///
    /// Fences loads of `key` in flight (their results are not stored) and reads in flight (their
    /// write-back is dropped), and waits for stores of `key` already under way, so nothing read or loaded
    /// before this call can reappear after it.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: ``CacheError/Code/tierFailure`` naming each tier that threw; the other tiers no longer hold
    ///   the key.
    /// - Complexity: One removal per tier, concurrently.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func removeEntry(forKey key: Key) async throws {
        await fence(key)
        defer { endMutation(of: key) }
        let failures = await forEachTier(in: tiers.indices) { tier in
            try await tier.cache.removeEntry(forKey: key)
        }
        try throwIfFailed(failures, "remove the entry")
    }

    /// Removes the value for `key` from every tier; the same as ``removeEntry(forKey:)``, fencing included.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: ``CacheError/Code/tierFailure`` naming each tier that threw.
    /// - Complexity: One removal per tier, concurrently.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func removeValue(forKey key: Key) async throws {
        try await removeEntry(forKey: key)
    }

    /// Clears every tier, concurrently.
    ///
    /// Fences every load in flight (no result of a load that started before this call is stored) and every
    /// read in flight, and waits for stores already under way.
    ///
    /// - Throws: ``CacheError/Code/tierFailure`` naming each tier that threw; the other tiers are empty.
    /// - Complexity: What each tier's `removeAll()` costs; the tiers run concurrently.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func removeAll() async throws {
        await fence(nil)
        defer { endMutation(of: nil) }
        let failures = await forEachTier(in: tiers.indices) { tier in
            try await tier.cache.removeAll()
        }
        try throwIfFailed(failures, "remove every entry")
    }

    // MARK: - Helpers

    /// Fences `key` (every key when `nil`) and waits for the stores already under way for it; pair it with
    /// ``endMutation(of:)``.
    func fence(_ key: Key?) async {
        let stores = coordinator.withLock { state in
            let stores = state.beginMutation(of: key)
            publishedEpoch.publish(state.mutationEpoch)
            return stores
        }
        guard !stores.isEmpty else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = coordinator.withLock { $0.waitForStores(stores, continuation: continuation) }
            ready?.resume()
        }
    }

    /// Ends the write or removal that ``fence(_:)`` registered, once its tier calls are done; until then no
    /// write-back or loaded value of `key` (of any key when `nil`) may begin to be stored.
    func endMutation(of key: Key?) {
        coordinator.withLock { state in
            state.endMutation(of: key)
            publishedEpoch.publish(state.mutationEpoch)
        }
    }

    /// Ends a store and resumes the writes and removals that were waiting only for it.
    func endStore(_ storeID: UInt64) {
        let ready = coordinator.withLock { state in
            let ready = state.endStore(storeID)
            publishedEpoch.publish(state.mutationEpoch)
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    /// Runs `operation` on the tiers at `indices` concurrently and returns the failures, by tier index.
    func forEachTier(
        in indices: Range<Int>,
        _ operation: @escaping @Sendable (Tier) async throws -> Void
    ) async -> [CacheError.TierFailure] {
        let tiers = self.tiers
        var failures = await withTaskGroup(of: CacheError.TierFailure?.self) { group in
            for index in indices {
                let tier = tiers[index]
                group.addTask {
                    do {
                        try await operation(tier)
                        return nil
                    } catch {
                        return CacheError.TierFailure(index: index, name: tier.name, error: error)
                    }
                }
            }
            var failures: [CacheError.TierFailure] = []
            for await failure in group {
                if let failure { failures.append(failure) }
            }
            return failures
        }
        failures.sort { $0.index < $1.index }
        return failures
    }

    /// Counts `failures` against their tiers and throws the partial-failure error when there are any.
    private func throwIfFailed(_ failures: [CacheError.TierFailure], _ operation: String) throws {
        guard !failures.isEmpty else { return }
        counters.withLock { statistics in
            for failure in failures { statistics.tiers[failure.index].errors += 1 }
        }
        let names = failures.map { "\($0.index) (\($0.name))" }.joined(separator: ", ")
        throw CacheError(
            .tierFailure,
            "could not \(operation) in \(failures.count) of \(tiers.count) tiers: tier \(names)",
            tierFailures: failures)
    }
}

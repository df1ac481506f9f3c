import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
    /// - Complexity: O(*t*) tier writes for *t* tiers, run concurrently; the call takes as long as the
    ///   slowest tier.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) async throws {
        await replayPendingWritesBeforeWriting()
        let base = await pendingBase(forKey: key)
        try await coordinator.fenced(key) {
            let failures = await keepPending(
                .set(key), base: base, entry: entry,
                failures: await setEntry(entry, forKey: key, inTiers: tiers.indices, now: clock.now))
            guard !failures.isEmpty else { return }
            // A tier that kept its old entry would serve a value older than the other tiers now hold.
            for failure in failures {
                try? await tiers[failure.index].handle.removeEntry(key)
            }
            try throwIfFailed(failures, "store the entry")
        }
    }

    /// Stores `value` under `key` in every tier, with `expiry` resolved against ``clock`` now; the same
    /// write as ``setEntry(_:forKey:)``, fencing and partial failures included.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - expiry: When it expires; `nil` for `.never` (each tier still caps it at its
    ///     ``Tier/maximumLifetime``).
    /// - Throws: What ``setEntry(_:forKey:)`` throws: ``CacheError/Code/tierFailure`` naming each tier
    ///   that refused or failed the write (for example one whose limit the entry alone exceeds, with
    ///   ``CacheError/Code/entryTooLarge`` as its cause).
    /// - Complexity: That of ``setEntry(_:forKey:)``.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func setValue(_ value: Value, forKey key: Key, expiry: Expiry? = nil) async throws {
        try await setValueThroughEntry(value, forKey: key, expiry: expiry)
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
    /// - Complexity: O(*t*) tier removals for *t* tiers, run concurrently.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func removeEntry(forKey key: Key) async throws {
        await replayPendingWritesBeforeWriting()
        let base = await pendingBase(forKey: key)
        try await coordinator.fenced(key) {
            let failures = await keepPending(
                .remove(key), base: base,
                failures: await forEachTier(in: tiers.indices) { tier in try await tier.handle.removeEntry(key) })
            try throwIfFailed(failures, "remove the entry")
        }
    }

    /// Clears every tier, concurrently.
    ///
    /// Fences every load in flight (no result of a load that started before this call is stored) and every
    /// read in flight, and waits for stores already under way.
    ///
    /// - Throws: ``CacheError/Code/tierFailure`` naming each tier that threw; the other tiers are empty.
    /// - Complexity: O(*t*) tier calls for *t* tiers, run concurrently, each as costly as that tier's
    ///   `removeAll()`.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func removeAll() async throws {
        await replayPendingWritesBeforeWriting()
        try await coordinator.fenced(nil) {
            let failures = await keepPending(
                .removeAll, base: nil,
                failures: await forEachTier(in: tiers.indices) { tier in try await tier.handle.removeAll() })
            try throwIfFailed(failures, "remove every entry")
        }
    }

    // MARK: - Helpers

    /// Counts `failures` against their tiers and throws the partial-failure error when there are any.
    func throwIfFailed(_ failures: [CacheError.TierFailure], _ operation: String) throws {
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

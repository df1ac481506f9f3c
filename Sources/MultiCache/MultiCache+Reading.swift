import CacheCore
import Foundation

extension MultiCache {
    /// Returns the entry for `key` from the fastest tier that holds it, after writing it back into every
    /// faster tier.
    ///
    /// Tiers are asked one after another, fastest first; a tier that throws is skipped, counted and
    /// reported (see the type's *Failures* rules). The write-back is awaited before this returns.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry, with the absolute expiry and cost the answering tier returned, or `nil` when no
    ///   tier holds a live entry.
    /// - Throws: ``CacheError/Code/tierFailure`` when every tier threw, listing each; `CancellationError`
    ///   when a tier threw it.
    /// - Complexity: At most one read per tier, one after another, then at most one write per faster tier,
    ///   concurrently; plus two short lock operations.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        let epoch = coordinator.withLock { $0.mutationEpoch }
        var failures: [CacheError.TierFailure] = []
        var misses: [Int] = []
        for (index, tier) in tiers.enumerated() {
            let found: CacheEntry<Value>?
            do {
                found = try await tier.cache.entry(forKey: key)
            } catch let error as CancellationError {
                recordRead(hitTier: nil, misses: misses, failures: failures, countsAsRead: false)
                throw error
            } catch {
                failures.append(CacheError.TierFailure(index: index, name: tier.name, error: error))
                observer?(
                    CacheEvent(
                        .tierReadFailed, "tier \(index) (\(tier.name)) failed to read; asking the next tier",
                        tierIndex: index, error: error))
                continue
            }
            guard let found else {
                misses.append(index)
                continue
            }
            recordRead(hitTier: index, misses: misses, failures: failures, countsAsRead: true)
            if index > 0 {
                await writeBack(found, forKey: key, intoTiersBefore: index, epochSeen: epoch)
            }
            return found
        }
        guard failures.count < tiers.count else {
            recordRead(hitTier: nil, misses: misses, failures: failures, countsAsRead: false)
            throw CacheError(
                .tierFailure, "every tier (\(tiers.count)) failed to read the entry", tierFailures: failures)
        }
        recordRead(hitTier: nil, misses: misses, failures: failures, countsAsRead: true)
        return nil
    }

    /// Counts one read in a single lock operation.
    private func recordRead(
        hitTier: Int?,
        misses: [Int],
        failures: [CacheError.TierFailure],
        countsAsRead: Bool
    ) {
        counters.withLock { statistics in
            for index in misses { statistics.tiers[index].misses += 1 }
            for failure in failures { statistics.tiers[failure.index].errors += 1 }
            if let hitTier {
                statistics.tiers[hitTier].hits += 1
                statistics.hits += 1
            } else if countsAsRead {
                statistics.misses += 1
            }
        }
    }

    /// Copies `entry`, found in tier `hitTier`, into tiers `0..<hitTier`, keeping its expiry and cost.
    private func writeBack(
        _ entry: CacheEntry<Value>,
        forKey key: Key,
        intoTiersBefore hitTier: Int,
        epochSeen: UInt64
    ) async {
        guard let storeID = coordinator.withLock({ $0.beginWriteBack(key: key, epochSeen: epochSeen) }) else {
            return
        }
        let now = clock.now
        let failures = await forEachTier(in: 0..<hitTier) { tier in
            try await tier.cache.setEntry(tier.capping(entry, now: now), forKey: key)
        }
        endStore(storeID)
        let failed = Set(failures.map(\.index))
        counters.withLock { statistics in
            for index in 0..<hitTier where !failed.contains(index) { statistics.tiers[index].writeBacks += 1 }
            for index in failed { statistics.tiers[index].errors += 1 }
        }
        for failure in failures {
            observer?(
                CacheEvent(
                    .writeBackFailed,
                    "writing a hit from tier \(hitTier) back into tier \(failure.index) (\(failure.name)) failed",
                    tierIndex: failure.index, error: failure.error))
        }
    }
}

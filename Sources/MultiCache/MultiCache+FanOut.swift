import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MultiCache {
    /// Writes `entry` under `key` into the tiers at `indices`, each copy capped by its tier's maximum
    /// lifetime as of `now`, concurrently; used by writes, write-backs and the stores of loaded values.
    ///
    /// - Returns: The tiers that threw, by index.
    func setEntry(
        _ entry: CacheEntry<Value>,
        forKey key: Key,
        inTiers indices: Range<Int>,
        now: Date
    ) async -> [CacheError.TierFailure] {
        await forEachTier(in: indices) { tier in
            try await tier.handle.setEntry(tier.capping(entry, now: now), key)
        }
    }

    /// Runs `operation` on the tiers at `indices` concurrently and returns the failures, by tier index.
    ///
    /// A single tier is called directly, without a task group: a write-back into tier 0 after a hit in
    /// tier 1, the commonest case, then costs no child task.
    func forEachTier(
        in indices: Range<Int>,
        _ operation: @escaping @Sendable (Tier) async throws -> Void
    ) async -> [CacheError.TierFailure] {
        if indices.count == 1 {
            let failure = await Self.call(operation, on: tiers[indices.lowerBound], at: indices.lowerBound)
            return failure.map { [$0] } ?? []
        }
        let tiers = self.tiers
        var failures = await withTaskGroup(of: CacheError.TierFailure?.self) { group in
            for index in indices {
                group.addTask { await Self.call(operation, on: tiers[index], at: index) }
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

    /// ``forEachTier(in:_:)`` for an operation that needs each tier's index too.
    func forEachIndexedTier(
        in indices: Range<Int>,
        _ operation: @escaping @Sendable (Int, Tier) async throws -> Void
    ) async -> [CacheError.TierFailure] {
        let tiers = self.tiers
        var failures = await withTaskGroup(of: CacheError.TierFailure?.self) { group in
            for index in indices {
                group.addTask { await Self.call({ try await operation(index, $0) }, on: tiers[index], at: index) }
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

    /// Runs `operation` on `tier`, tier number `index`, and returns its failure, if any.
    private static func call(
        _ operation: @Sendable (Tier) async throws -> Void,
        on tier: Tier,
        at index: Int
    ) async -> CacheError.TierFailure? {
        do {
            try await operation(tier)
            return nil
        } catch {
            return CacheError.TierFailure(index: index, name: tier.name, error: error)
        }
    }
}

import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MultiCache: BulkReadingCache {
    /// Returns the live entries for those of `keys` that some tier holds, asking each tier once, fastest
    /// first, for the keys still missing (in one bulk read where the tier is a `BulkReadingCache`), and
    /// writing each hit back into the faster tiers before returning.
    ///
    /// A tier that throws is skipped for every key (counted and reported as ``CacheEvent/Kind/tierReadFailed``);
    /// the call throws ``CacheError/Code/tierFailure`` only when every tier threw.
    ///
    /// - Parameter keys: The keys to look up; duplicates are read once.
    /// - Returns: The live entries by key.
    /// - Throws: ``CacheError/Code/tierFailure`` when every tier threw; `CancellationError`.
    /// - Complexity: At most one bulk read per tier, one after another, plus the write-backs.
    ///
    /// Thread-safe.
    public func entries(forKeys keys: [Key]) async throws -> [Key: CacheEntry<Value>] {
        try await readTiersInBulk(keys, from: 0, sequenceSeen: changeSequenceBeforeRead())
    }

    /// Returns the live values for those of `keys` that some tier holds: ``entries(forKeys:)`` without the
    /// expiries and costs, with a synchronous first tier read without suspending, in one bulk read.
    ///
    /// - Parameter keys: The keys to look up; duplicates are read once.
    /// - Returns: The live values by key.
    /// - Throws: What ``entries(forKeys:)`` throws.
    /// - Complexity: One bulk read of the first tier (for a `MemoryCache`, one lock per shard and one clock
    ///   reading), then at most one bulk read per other tier for the keys still missing.
    ///
    /// Thread-safe.
    @inlinable
    public func values(forKeys keys: [Key]) async throws -> [Key: Value] {
        let sequenceSeen = changeSequenceBeforeRead()
        guard !hasAuthority, let valuesAtOnce = tiers[0].handle.valuesAtOnce else {
            return try await readTiersInBulk(keys, from: 0, sequenceSeen: sequenceSeen).mapValues(\.value)
        }
        // Inlined like `value(forKey:)`: the first tier's hits cost its bulk read and one atomic add.
        let (found, missing) = valuesAtOnce(keys)
        countTierZeroHits(found.count)
        guard !missing.isEmpty else { return found }
        return try await readRemainingTiers(missing, into: found, sequenceSeen: sequenceSeen)
    }

    /// The slow part of `values(forKeys:)`: reads the keys tier 0 lacked from the other tiers.
    @usableFromInline
    func readRemainingTiers(
        _ missing: [Key], into found: [Key: Value], sequenceSeen: UInt64
    ) async throws -> [Key: Value] {
        var found = found
        for (key, entry) in try await readTiersInBulk(missing, from: 1, sequenceSeen: sequenceSeen) {
            found[key] = entry.value
        }
        return found
    }

    /// Asks tiers `start...` once each, in order, for the keys still missing, writes hits back into the
    /// faster tiers and counts the reads; tiers before `start` (a synchronous tier 0) missed every key.
    @usableFromInline
    func readTiersInBulk(
        _ keys: [Key], from start: Int, sequenceSeen: UInt64
    ) async throws -> [Key: CacheEntry<Value>] {
        var seen = Set<Key>()
        var missing = keys.filter { seen.insert($0).inserted }
        if hasAuthority {
            // Every key's answer is the authority's, and each may need its local copies replaced or
            // removed: one authoritative read per key.
            var found: [Key: CacheEntry<Value>] = [:]
            for key in missing {
                found[key] = try await readThroughAuthority(forKey: key, sequenceSeen: sequenceSeen)
            }
            return found
        }
        let asked = missing.count
        var found: [Key: CacheEntry<Value>] = [:]
        var failures: [CacheError.TierFailure] = []
        for index in start..<tiers.count where !missing.isEmpty {
            let got: [Key: CacheEntry<Value>]
            do {
                got = try await tiers[index].handle.entries(missing)
            } catch let error as CancellationError {
                throw error
            } catch {
                failures.append(CacheError.TierFailure(index: index, name: tiers[index].name, error: error))
                observer?(
                    CacheEvent(
                        .tierReadFailed,
                        "tier \(index) (\(tiers[index].name)) failed a bulk read; asking the next tier",
                        tierIndex: index, error: error))
                continue
            }
            counters.withLock { statistics in
                statistics.tiers[index].hits += got.count
                statistics.tiers[index].misses += missing.count - got.count
            }
            for (key, entry) in got {
                found[key] = entry
                guard index > 0 else { continue }
                let written = await coordinator.writeBack(key: key, sequenceSeen: sequenceSeen) {
                    await setEntry(entry, forKey: key, inTiers: 0..<index, now: clock.now)
                }
                if let written {
                    counters.withLock { statistics in
                        for tier in 0..<index where !written.contains(where: { $0.index == tier }) {
                            statistics.tiers[tier].writeBacks += 1
                        }
                    }
                }
            }
            missing.removeAll { got[$0] != nil }
        }
        counters.withLock { statistics in
            for index in 0..<start { statistics.tiers[index].misses += asked }
            for failure in failures { statistics.tiers[failure.index].errors += 1 }
            statistics.hits += found.count
            statistics.misses += missing.count
        }
        if !failures.isEmpty, failures.count == tiers.count - start, start == 0 {
            throw CacheError(
                .tierFailure, "every tier (\(tiers.count)) failed to read the entries", tierFailures: failures)
        }
        return found
    }
}

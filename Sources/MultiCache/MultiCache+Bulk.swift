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

    /// Returns the values for `keys`, loading every key missing in every tier in **one** call of
    /// `loadBatch`, which may return fewer keys than asked.
    ///
    /// ```swift
    /// let users = try await cache.values(forKeys: ids, expiry: .seconds(600)) { missing in
    ///     try await api.users(ids: missing)   // one request for every key no tier holds
    /// }
    /// ```
    ///
    /// Each tier is read once for the keys still missing (``entries(forKeys:)``). A key another caller is
    /// loading already (``value(forKey:expiry:orLoad:)`` or another batch) is not loaded again: the batch
    /// waits for that load. While the batch loads, a single-key caller of one of its keys joins the batch's
    /// load instead of running its own loader. Each loaded value is stored in every tier, unless a write or
    /// removal of its key fenced it, before the call returns.
    ///
    /// - Parameters:
    ///   - keys: The keys to look up; duplicates are read and loaded once.
    ///   - expiry: The loaded values' expiry, resolved against ``clock`` when the batch ends.
    ///   - loadBatch: Given every key missing everywhere (and not being loaded by another caller), returns
    ///     the values it found. Called once per call, on a task of its own, which runs to its end even
    ///     when this caller is cancelled (single-key callers may be waiting for it); once more, with one key,
    ///     for a key whose joined load failed or was fenced before this call could wait for it.
    /// - Returns: The cached and loaded values by key; keys `loadBatch` left out are absent (a single-key
    ///   caller that joined one gets ``CacheError/Code/notLoaded``).
    /// - Throws: What the tier reads throw (see ``entries(forKeys:)``); what `loadBatch` or a joined load
    ///   threw; `CancellationError`.
    /// - Complexity: At most one bulk read per tier, one loader call, one store per loaded key.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func values(
        forKeys keys: [Key],
        expiry: Expiry = .never,
        orLoad loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
    ) async throws -> [Key: Value] {
        // While a tier's invalidations are starting, misses wait for them (see `readBeforeLoadingDuringStart`).
        if relay.isStarting.withLock({ $0 }) {
            let found = try await values(forKeys: keys)
            if Set(keys).isSubset(of: found.keys) { return found }
            await waitForInvalidationStart()
        }
        return try await coordinator.values(
            forKeys: keys,
            read: { keys in try await values(forKeys: keys) },
            recheck: { [weak self] key in try? await self?.entry(forKey: key)?.value },
            loadBatch: loadBatch,
            store: { [weak self] loadID, key, value in
                await self?.storeLoadedValue(value, forKey: key, expiry: expiry, loadID: loadID)
            })
    }
}

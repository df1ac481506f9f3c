import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MultiCache {
    /// Returns the live value for `key` from the first tier that has it; ``entry(forKey:)`` without the
    /// expiry and cost, with the same write-backs and failure rules.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value, or `nil` when no tier has a live entry.
    /// - Throws: What ``entry(forKey:)`` throws.
    /// - Complexity: That of ``entry(forKey:)``.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    @inlinable
    public func value(forKey key: Key) async throws -> Value? {
        // The fast path of `entry(forKey:)`, without building the entry a hit would drop: a synchronous
        // first tier answers with the value alone. Inlinable for the same reason; not
        // `valueThroughEntry(forKey:)`, whose unspecialized async frame more than doubled a tier-0 hit.
        let sequenceSeen = changeSequenceBeforeRead()
        if hasAuthority {
            return try await readThroughAuthority(forKey: key, sequenceSeen: sequenceSeen)?.value
        }
        guard let valueAtOnce = tiers[0].handle.valueAtOnce else {
            return try await readTiers(forKey: key, from: 0, sequenceSeen: sequenceSeen)?.value
        }
        guard let found = valueAtOnce(key) else {
            return try await readTiers(forKey: key, from: 1, sequenceSeen: sequenceSeen)?.value
        }
        countTierZeroHit()
        return found
    }

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
    /// - Complexity: O(*t*) tier reads, one after another, then up to *t* − 1 write-backs, concurrently,
    ///   where *t* is the number of tiers; a hit in the first tier is one tier read.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    @inlinable
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        // The fast path: a hit in a first tier that reads without suspending (memory). Inlinable, so a
        // caller who names the key and value types gets it compiled for them (unspecialized, each read
        // looks up the metadata of `CacheEntry<Value>?` at run time), and small enough to be inlined: a hit
        // costs the tier's read, one lock-free load of the change sequence and one atomic add, and no async
        // call, task allocation or executor check. Everything else is the slow loop.
        let sequenceSeen = changeSequenceBeforeRead()
        if hasAuthority {
            return try await readThroughAuthority(forKey: key, sequenceSeen: sequenceSeen)
        }
        guard let entryAtOnce = tiers[0].handle.entryAtOnce else {
            return try await readTiers(forKey: key, from: 0, sequenceSeen: sequenceSeen)
        }
        guard let found = entryAtOnce(key) else {
            return try await readTiers(forKey: key, from: 1, sequenceSeen: sequenceSeen)
        }
        countTierZeroHit()
        return found
    }

    /// The change sequence a read notes before it asks the first tier, to drop its write-back when a write
    /// or removal of its key begins while it runs; read without a lock (see ``ChangeSequenceMirror``).
    @usableFromInline
    func changeSequenceBeforeRead() -> UInt64 {
        coordinator.changeSequence
    }

    /// Counts a read that tier 0 answered, with one atomic add (see ``HitCounter``).
    @usableFromInline
    func countTierZeroHit() {
        tierZeroHits.increment()
    }

    /// Counts `count` reads that tier 0 answered, with one atomic add.
    @usableFromInline
    func countTierZeroHits(_ count: Int) {
        tierZeroHits.increment(by: count)
    }

    /// The slow loop: asks tiers `start...` in order, counts the read, and writes a hit back into the
    /// faster tiers.
    ///
    /// - Parameters:
    ///   - key: The key read.
    ///   - start: The first tier to ask; the tiers before it (tier 0, read without suspending) missed.
    ///   - sequenceSeen: The change sequence noted before the first tier was asked.
    @usableFromInline
    func readTiers(forKey key: Key, from start: Int, sequenceSeen: UInt64) async throws -> CacheEntry<Value>? {
        // A synchronous read cannot throw, so the tiers skipped were misses.
        var misses = Array(0..<start)
        var failures: [CacheError.TierFailure] = []
        for index in start..<tiers.count {
            let found: CacheEntry<Value>?
            do {
                found = try await tiers[index].handle.entry(key)
            } catch let error as CancellationError {
                recordRead(hitTier: nil, misses: misses, failures: failures, countsAsRead: false)
                throw error
            } catch {
                failures.append(CacheError.TierFailure(index: index, name: tiers[index].name, error: error))
                reportReadFailure(ofTier: index, error)
                continue
            }
            guard let found else {
                misses.append(index)
                continue
            }
            guard index > 0 else {
                // Nothing to count but the hit, and nothing to write back.
                countTierZeroHit()
                return found
            }
            recordRead(hitTier: index, misses: misses, failures: failures, countsAsRead: true)
            await writeBack(found, forKey: key, intoTiersBefore: index, sequenceSeen: sequenceSeen)
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

    /// Tells the observer that tier `index` threw on a read and the next tier will be asked.
    private func reportReadFailure(ofTier index: Int, _ error: any Error) {
        observer?(
            CacheEvent(
                .tierReadFailed, "tier \(index) (\(tiers[index].name)) failed to read; asking the next tier",
                tierIndex: index, error: error))
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

    /// Copies `entry`, found in tier `hitTier`, into tiers `0..<hitTier`, keeping its expiry and cost,
    /// unless the key changed since the read noted `sequenceSeen`.
    func writeBack(
        _ entry: CacheEntry<Value>,
        forKey key: Key,
        intoTiersBefore hitTier: Int,
        sequenceSeen: UInt64
    ) async {
        let written = await coordinator.writeBack(key: key, sequenceSeen: sequenceSeen) {
            await setEntry(entry, forKey: key, inTiers: 0..<hitTier, now: clock.now)
        }
        guard let written else { return }
        // A tier that refuses the entry by size (a large value above a small memory tier) is expected on
        // every read of that key: skipped quietly, neither a write-back nor an error.
        let refused = Set(written.filter(\.isRefusedBySize).map(\.index))
        let failures = written.filter { !$0.isRefusedBySize }
        let failed = Set(failures.map(\.index))
        counters.withLock { statistics in
            for index in 0..<hitTier where !failed.contains(index) && !refused.contains(index) {
                statistics.tiers[index].writeBacks += 1
            }
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

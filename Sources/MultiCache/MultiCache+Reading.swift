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
    ///   concurrently; plus one atomic add for the statistics on a tier-0 hit, one short lock operation
    ///   otherwise (a few more when a write-back runs). A first tier that is a `SynchronousCache` is read
    ///   without suspending.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    @inlinable
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        // Inlinable so that a caller who names the key and value types gets this fast path compiled for
        // them: unspecialized, each read looks up the metadata of `CacheEntry<Value>?` at run time.
        let epoch = mutationEpochBeforeRead()
        // A first tier that reads without suspending (memory) is read here without an `await`: this
        // function is then small enough to be inlined into the caller, and a hit costs no async call,
        // no task allocation and no executor check.
        if let readAtOnce = tiers[0].readAtOnce {
            if let found = readAtOnce(key) {
                countTierZeroHit()
                return found
            }
            return try await entry(forKey: key, fromTier: 1, misses: [0], failures: [], epochSeen: epoch)
        }
        return try await entry(forKey: key, startingAtTierZeroAfter: epoch)
    }

    /// Reads tier 0 through its `async` API, then the rest on a miss or a failure.
    @usableFromInline
    func entry(forKey key: Key, startingAtTierZeroAfter epoch: UInt64) async throws -> CacheEntry<Value>? {
        // Tier 0 first, on its own: a hit there needs no write-back and no list of misses or failures, so
        // the commonest read takes one tier call and one counter update. `init` guarantees a tier 0.
        let found: CacheEntry<Value>?
        do {
            found = try await tiers[0].read(key)
        } catch let error as CancellationError {
            throw error
        } catch {
            return try await entry(forKey: key, afterTierZeroThrew: error, epochSeen: epoch)
        }
        guard let found else {
            return try await entry(forKey: key, fromTier: 1, misses: [0], failures: [], epochSeen: epoch)
        }
        countTierZeroHit()
        return found
    }

    /// The mutation epoch a read remembers before it asks the first tier, to drop its write-back when a
    /// write or removal begins while it runs; read without a lock (see ``EpochMirror``).
    @usableFromInline
    func mutationEpochBeforeRead() -> UInt64 {
        publishedEpoch.load()
    }

    /// Counts a read that tier 0 answered, with one atomic add (see ``HitCounter``).
    @usableFromInline
    func countTierZeroHit() {
        tierZeroHits.increment()
    }

    /// Goes on with a read whose tier 0 threw: reports the failure and asks the slower tiers.
    @usableFromInline
    func entry(
        forKey key: Key,
        afterTierZeroThrew error: any Error,
        epochSeen epoch: UInt64
    ) async throws -> CacheEntry<Value>? {
        reportReadFailure(ofTier: 0, error)
        let failure = CacheError.TierFailure(index: 0, name: tiers[0].name, error: error)
        return try await entry(forKey: key, fromTier: 1, misses: [], failures: [failure], epochSeen: epoch)
    }

    /// Goes on with a read that tier 0 did not answer: asks tiers `start...` in order, counts the read,
    /// and writes a hit back into the faster tiers.
    ///
    /// - Parameters:
    ///   - key: The key read.
    ///   - start: The first tier still to ask.
    ///   - misses: The tiers before `start` that answered `nil`.
    ///   - failures: The tiers before `start` that threw.
    ///   - epochSeen: The mutation epoch read before the first tier was asked.
    @usableFromInline
    func entry(
        forKey key: Key,
        fromTier start: Int,
        misses: [Int],
        failures: [CacheError.TierFailure],
        epochSeen epoch: UInt64
    ) async throws -> CacheEntry<Value>? {
        var misses = misses
        var failures = failures
        for index in start..<tiers.count {
            let found: CacheEntry<Value>?
            do {
                found = try await tiers[index].read(key)
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
            recordRead(hitTier: index, misses: misses, failures: failures, countsAsRead: true)
            await writeBack(found, forKey: key, intoTiersBefore: index, epochSeen: epoch)
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

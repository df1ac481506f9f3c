import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension MultiCache {
    /// The last tier as the one that decides what reads see while it answers: the source of truth among the
    /// tiers, such as a Redis tier shared by short-lived processes that have no invalidation listener.
    ///
    /// ```swift
    /// let cache = try MultiCache<String, Data>(
    ///     tiers: [.init(disk, name: "disk"), .init(redis, name: "redis")],
    ///     authority: .init(storesEntry: { $0.value.count <= 1 << 20 }))
    /// ```
    ///
    /// With an authority, every read asks it as well as the tiers above it (the *local* tiers), and its answer
    /// wins:
    /// - **A hit** is the result. A local copy that is missing or differs is replaced by it (written back
    ///   with its remaining lifetime); a local copy that is current is left alone, so a read of an unchanged
    ///   entry writes nothing.
    /// - **A miss** is a miss: the local copies are removed (another process removed, replaced or cleared
    ///   the entry, or it expired there), unless the local entry is one the authority cannot store at all
    ///   (``storesEntry`` returns `false`, a value over its size limit), which lives only locally and is
    ///   served. A key it cannot store (``storesKey`` returns `false`) is read from the local tiers alone.
    ///   Entries that live only locally are not reached by other processes' removals or clears.
    /// - **A failure** (an unreachable or slow server) is counted and reported as
    ///   ``CacheEvent/Kind/tierReadFailed``, and the local tiers answer alone, as they would without an
    ///   authority.
    ///
    /// Writes and removals are unchanged: every tier, concurrently. Bulk reads, reads with load options
    /// and load-once read through the same rules.
    ///
    /// Use an authority where the local tiers cannot learn of other processes' changes: a command-line tool
    /// or a batch job whose disk tier outlives the process. A long-running process whose remote tier
    /// publishes invalidations (``CacheInvalidationSource``) keeps its memory tier coherent without one, and
    /// serves local hits without a round trip.
    ///
    /// A plain, immutable value; `Sendable`.
    public struct Authority: Sendable {
        /// Whether the authoritative tier can hold any entry under `key` (a Redis tier refuses keys over
        /// `RedisCache.maximumKeySize`). A key it cannot lives only in the local tiers: reads of it do not ask
        /// the authority, whose miss would say nothing.
        public let storesKey: @Sendable (Key) -> Bool
        /// Whether the authoritative tier can hold `entry` at all. An entry it cannot (over its size limit)
        /// lives only in the local tiers, which serve it even though the authority misses.
        public let storesEntry: @Sendable (CacheEntry<Value>) -> Bool
        /// Whether a local entry is the same as the authority's, so that a read need not replace it.
        public let isSameEntry: @Sendable (_ local: CacheEntry<Value>, _ authoritative: CacheEntry<Value>) -> Bool
        /// How writes the authority misses are kept and replayed; `nil` for none (a write it missed then
        /// lives only in the local tiers, until a read that reaches the authority drops it).
        public let replay: Replay?

        /// Creates an authority with a comparison of your own, for values that are not `Equatable`.
        ///
        /// - Parameters:
        ///   - storesKey: Whether the authoritative tier can hold entries under a key; `true` for every key
        ///     unless given. Called on the reading task; must be quick and must not call the cache.
        ///   - storesEntry: Whether the authoritative tier can hold an entry; `true` for every entry unless
        ///     given. Called on the reading task; must be quick and must not call the cache.
        ///   - isSameEntry: Whether a local entry matches the authority's. Returning `false` for equal
        ///     entries costs a local write per read; returning `true` for different ones leaves the local
        ///     copy in place, which the next read with a failing authority serves, so compare everything a
        ///     reader sees (value, expiry, tags). Costs are each tier's own.
        ///   - replay: How writes the authority misses are kept and replayed; `nil` (the default) for none.
        public init(
            storesKey: @escaping @Sendable (Key) -> Bool = { _ in true },
            storesEntry: @escaping @Sendable (CacheEntry<Value>) -> Bool = { _ in true },
            isSameEntry: @escaping @Sendable (_ local: CacheEntry<Value>, _ authoritative: CacheEntry<Value>) -> Bool,
            replay: Replay? = nil
        ) {
            self.storesKey = storesKey
            self.storesEntry = storesEntry
            self.isSameEntry = isSameEntry
            self.replay = replay
        }
    }
}

extension MultiCache.Authority where Value: Equatable {
    /// Creates an authority that calls two entries the same when their values and tags are equal and their
    /// expiry and stale instants lie within a millisecond of each other (tiers store instants at different
    /// precisions). Costs are not compared: each tier reports its own (a memory tier computes one).
    ///
    /// - Parameters:
    ///   - storesKey: Whether the authoritative tier can hold entries under a key; `true` for every key unless
    ///     given.
    ///   - storesEntry: Whether the authoritative tier can hold an entry; `true` for every entry unless given.
    ///   - replay: How writes the authority misses are kept and replayed; `nil` (the default) for none.
    public init(
        storesKey: @escaping @Sendable (Key) -> Bool = { _ in true },
        storesEntry: @escaping @Sendable (CacheEntry<Value>) -> Bool = { _ in true },
        replay: MultiCache.Authority.Replay? = nil
    ) {
        self.init(
            storesKey: storesKey,
            storesEntry: storesEntry,
            isSameEntry: { local, authoritative in
                local.value == authoritative.value && local.tags == authoritative.tags
                    && Self.sameInstant(local.expiresAt, authoritative.expiresAt)
                    && Self.sameInstant(local.staleUntil, authoritative.staleUntil)
            },
            replay: replay)
    }

    private static func sameInstant(_ lhs: Date?, _ rhs: Date?) -> Bool {
        switch (lhs, rhs) {
        case (nil, nil): true
        case (let lhs?, let rhs?): abs(lhs.timeIntervalSince(rhs)) < 0.001
        default: false
        }
    }
}

extension MultiCache {
    /// What the authoritative tier answered a read.
    enum AuthorityAnswer {
        case hit, miss, failed
    }

    /// The read of ``entry(forKey:)`` when the cache has an ``Authority``: the local tiers, then the
    /// authority (the last tier), whose answer wins (see ``Authority`` for the rules).
    @usableFromInline
    func readThroughAuthority(forKey key: Key, sequenceSeen: UInt64) async throws -> CacheEntry<Value>? {
        guard let authority else { return try await readTiers(forKey: key, from: 0, sequenceSeen: sequenceSeen) }
        guard authority.storesKey(key) else { return try await readLocalTiersOnly(forKey: key) }
        // A pending write of this key must reach the authority before its answer is judged: a miss there
        // would otherwise remove the only copy of the write.
        let inSync = await replayPendingWritesIfNeeded()
        let authorityIndex = tiers.count - 1
        var failures: [CacheError.TierFailure] = []
        let local = try await readLocalTiers(forKey: key, failures: &failures)
        let answer: CacheEntry<Value>?
        do {
            guard inSync else {
                throw CacheError(
                    .unavailable, "writes the authoritative tier missed are still pending; its answers wait for them")
            }
            answer = try await tiers[authorityIndex].handle.entry(key)
        } catch let error as CancellationError {
            throw error
        } catch {
            // Out of reach: the local tiers answer alone, as they would without an authority.
            failures.append(
                CacheError.TierFailure(index: authorityIndex, name: tiers[authorityIndex].name, error: error))
            observer?(
                CacheEvent(
                    .tierReadFailed,
                    "the authoritative tier \(authorityIndex) (\(tiers[authorityIndex].name)) failed to read; "
                        + "the tiers above it answer alone",
                    tierIndex: authorityIndex, error: error))
            countAuthorityRead(localHit: local?.index, answer: .failed, served: local != nil, failures: failures)
            guard failures.count < tiers.count else {
                throw CacheError(
                    .tierFailure, "every tier (\(tiers.count)) failed to read the entry", tierFailures: failures)
            }
            return local?.entry
        }
        if let answer {
            countAuthorityRead(localHit: local?.index, answer: .hit, served: true, failures: failures)
            if let local, authority.isSameEntry(local.entry, answer) {
                // Current: only the tiers above the one that holds it missed.
                if local.index > 0 {
                    await writeBack(answer, forKey: key, intoTiersBefore: local.index, sequenceSeen: sequenceSeen)
                }
            } else {
                await writeBack(answer, forKey: key, intoTiersBefore: authorityIndex, sequenceSeen: sequenceSeen)
            }
            return answer
        }
        if let local, !authority.storesEntry(local.entry) {
            countAuthorityRead(localHit: local.index, answer: .miss, served: true, failures: failures)
            return local.entry
        }
        countAuthorityRead(localHit: local?.index, answer: .miss, served: false, failures: failures)
        if local != nil {
            await dropLocalCopies(ofKey: key, sequenceSeen: sequenceSeen)
        }
        return nil
    }

    /// A read of a key the authority cannot hold: the local tiers alone, first hit wins; throws `tierFailure`
    /// only when every local tier failed.
    private func readLocalTiersOnly(forKey key: Key) async throws -> CacheEntry<Value>? {
        var failures: [CacheError.TierFailure] = []
        if let local = try await readLocalTiers(forKey: key, failures: &failures) { return local.entry }
        guard failures.count < tiers.count - 1 else {
            throw CacheError(
                .tierFailure, "every tier above the authority (\(tiers.count - 1)) failed to read the entry",
                tierFailures: failures)
        }
        return nil
    }

    /// The first hit among the tiers above the authority, with its tier; a tier that throws is skipped and
    /// reported as on any read, and added to `failures`.
    private func readLocalTiers(
        forKey key: Key, failures: inout [CacheError.TierFailure]
    ) async throws -> (entry: CacheEntry<Value>, index: Int)? {
        for index in 0..<(tiers.count - 1) {
            do {
                if let found = try await tiers[index].handle.entry(key) { return (found, index) }
            } catch let error as CancellationError {
                throw error
            } catch {
                failures.append(CacheError.TierFailure(index: index, name: tiers[index].name, error: error))
                observer?(
                    CacheEvent(
                        .tierReadFailed, "tier \(index) (\(tiers[index].name)) failed to read; asking the next tier",
                        tierIndex: index, error: error))
            }
        }
        return nil
    }

    /// Counts one read through the authority in a single lock operation: the local tiers asked before the one
    /// that held the key missed (or failed), the authority hit, missed or failed, and the read found an entry
    /// (`served`, from the authority or, when it did not answer with one, from the local tier) or not.
    private func countAuthorityRead(
        localHit: Int?, answer: AuthorityAnswer, served: Bool, failures: [CacheError.TierFailure]
    ) {
        let authorityIndex = tiers.count - 1
        let failed = Set(failures.map(\.index))
        counters.withLock { statistics in
            for index in 0..<(localHit ?? authorityIndex) where !failed.contains(index) {
                statistics.tiers[index].misses += 1
            }
            for index in failed { statistics.tiers[index].errors += 1 }
            switch answer {
            case .hit: statistics.tiers[authorityIndex].hits += 1
            case .miss: statistics.tiers[authorityIndex].misses += 1
            case .failed: break
            }
            if served, answer != .hit, let localHit { statistics.tiers[localHit].hits += 1 }
            if served {
                statistics.hits += 1
            } else if failures.count < tiers.count {
                statistics.misses += 1
            }
        }
    }

    /// Removes `key` from the local tiers after the authority missed, unless a write or removal of the key
    /// began since the read did (its entry is newer than the miss).
    private func dropLocalCopies(ofKey key: Key, sequenceSeen: UInt64) async {
        let failures = await coordinator.writeBack(key: key, sequenceSeen: sequenceSeen) {
            await forEachTier(in: 0..<(tiers.count - 1)) { tier in try await tier.handle.removeEntry(key) }
        }
        // Removing copies the authority's miss showed out of date is an invalidation like a published one.
        reportInvalidationFailures(failures ?? [])
    }
}

import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The one implementation of every load call of a MultiCache, single and bulk: the other load calls
// (`+LoadOnce`, `+LoadOptions`, `+Tags`, `+Bulk`) are this one with some arguments left at their defaults.
// Before a loader runs, each tier's fences are noted (`TierLoadStamp`): the versions of the load's tags, and
// the ticket of a tier that fences loads across processes; each tier's copy is stored against its own.
extension MultiCache {
    /// Returns the cached value for `key` or loads it once, with tags and load options together: the load
    /// of ``value(forKey:expiry:tags:orLoad:)`` with the behaviours of ``value(forKey:expiry:options:orLoad:)``.
    ///
    /// ```swift
    /// let options = LoadOptions(failSafe: .init(maximumStaleness: .seconds(3_600)))
    /// let plan = try await cache.value(forKey: "plan:7", expiry: .seconds(600), tags: ["account:7"], options: options) {
    ///     try await billing.plan(7)
    /// }
    /// ```
    ///
    /// The loaded entry carries `tags` and is kept stale for the longest grace `options` name. Before the loader
    /// runs, each tier's versions of `tags` are read, and a tier that fences loads across processes (a
    /// `RedisCache`) issues a load ticket; each tier's copy is stored against them, so a tag removal or a
    /// removal of `key` anywhere while the loader runs keeps the value out of that tier (the callers still get
    /// it). A tier whose fences could not be read gets no copy.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - expiry: The loaded value's expiry, resolved against ``clock`` when the load finishes; `.never` by
    ///     default (each tier still caps it at its ``Tier/maximumLifetime``).
    ///   - tags: The tags of the loaded entry; none for an untagged load.
    ///   - options: The resilience behaviours; all off in `LoadOptions()`.
    ///   - load: Produces the value; runs at most once per key at a time in this process, on a task of its own.
    /// - Returns: The cached, stale or loaded value.
    /// - Throws: ``CacheError/Code/invalidArgument`` for options out of range; what `load` threw unless
    ///   fail-safe served a stale value; ``CacheError/Code/loadTimedOut`` at the hard timeout;
    ///   ``CacheError/Code/tierFailure`` when every tier failed to read; `CancellationError`.
    /// - Complexity: That of ``value(forKey:expiry:options:orLoad:)``, plus, before a load, one read of fences
    ///   per tier that keeps any (concurrently).
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func value(
        forKey key: Key,
        expiry: Expiry = .never,
        tags: Set<String>,
        options: LoadOptions,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await loadValue(forKey: key, expiry: expiry, tags: tags, options: options, orLoad: load)
    }

    /// Returns the cached or loaded value for `key` to `completion`; the completion-handler form of
    /// ``value(forKey:expiry:tags:options:orLoad:)``, with the same rules.
    ///
    /// The call runs on an unstructured task of its own; cancelling the caller's task does not cancel it.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - expiry: The loaded value's expiry.
    ///   - tags: The tags of the loaded entry.
    ///   - options: The resilience behaviours.
    ///   - load: Produces the value on a miss.
    ///   - completion: Called exactly once with the value or the error (what the async form throws), on a
    ///     thread of Swift's global concurrent executor (never synchronously inside this call).
    /// - Complexity: That of ``value(forKey:expiry:tags:options:orLoad:)``.
    ///
    /// Thread-safe: may be called from any thread.
    public func value(
        forKey key: Key,
        expiry: Expiry,
        tags: Set<String>,
        options: LoadOptions,
        orLoad load: @escaping @Sendable () async throws -> Value,
        completion: @escaping @Sendable (Result<Value, any Error>) -> Void
    ) {
        Task {
            do {
                completion(
                    .success(
                        try await self.loadValue(
                            forKey: key, expiry: expiry, tags: tags, options: options, orLoad: load)))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// The body of every single-key load call.
    @usableFromInline
    func loadValue(
        forKey key: Key, expiry: Expiry, tags: Set<String>, options: LoadOptions,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        // A hit in a synchronous first tier is answered before anything a load needs is made (closures, the
        // stamps' lock): it cannot store, so it needs no fence. With options, only when no refresh is due.
        if !hasAuthority, let valueAndExpiryAtOnce = tiers[0].handle.valueAndExpiryAtOnce, options.isValid,
            let found = valueAndExpiryAtOnce(key),
            options.hasNoBehaviour
                || !options.isRefreshAheadDue(expiresAt: found.expiresAt, now: found.now, expiry: expiry)
        {
            countTierZeroHit()
            return found.value
        }
        // While a tier's invalidations are starting, a miss waits for them: a load begun now would be fenced.
        if let value = try await readBeforeLoadingDuringStart(key) { return value }
        let stamping = LoadStamping(cache: self, tags: tags)
        guard options.hasNoBehaviour else {
            return try await coordinator.value(
                forKey: key, options: options, clock: clock, expiry: expiry,
                read: { try await self.entryIncludingStale(forKey: key) },
                recheck: { [weak self] in try? await self?.entry(forKey: key)?.value },
                load: stamping.load(key, load),
                store: { [weak self] loadID, value in
                    await self?.storeLoadedValue(
                        value, forKey: key, expiry: expiry, loadID: loadID, options: options, tags: tags,
                        note: stamping.note(for: key))
                },
                isLeased: leasingTierProbe.map { isLeased in { await isLeased(key) } })
        }
        return try await coordinator.value(
            forKey: key,
            read: { try await entry(forKey: key)?.value },
            recheck: { try? await self.entry(forKey: key)?.value },
            load: stamping.load(key, load),
            store: { loadID, value in
                await self.storeLoadedValue(
                    value, forKey: key, expiry: expiry, loadID: loadID, tags: tags, note: stamping.note(for: key))
            })
    }

    /// Returns the values for `keys`, loading every key missing in every tier in **one** call of `loadBatch`,
    /// which may return fewer keys than asked; with `tags` on every loaded entry and the behaviours of
    /// `options` per key.
    ///
    /// ```swift
    /// let users = try await cache.values(forKeys: ids, expiry: .seconds(600), tags: ["users"]) { missing in
    ///     try await api.users(ids: missing)   // one request for every key no tier holds
    /// }
    /// ```
    ///
    /// Each tier is read once for the keys still missing (``entries(forKeys:)``). A key another caller is
    /// loading already (a single-key load or another batch) is not loaded again: the batch waits for that
    /// load. While the batch loads, a single-key caller of one of its keys joins the batch's load instead of
    /// running its own loader. Before the batch loader runs, each tier's fences are noted for every key it
    /// loads (the tags' versions once per tier, a ticket per key in a tier that fences loads across
    /// processes), and each loaded value is stored in every tier against them, unless a write or removal of
    /// its key fenced it, before the call returns. With `options`, each key is answered as the single-key load
    /// with options would answer it, and every key that must load is loaded in the one batch
    /// (Docs/Loading.md, "Bulk loads").
    ///
    /// - Parameters:
    ///   - keys: The keys to look up; duplicates are read and loaded once.
    ///   - expiry: The loaded values' expiry, resolved against ``clock`` when the batch ends.
    ///   - tags: The tags of every loaded entry; none by default.
    ///   - options: The resilience behaviours; all off by default.
    ///   - loadBatch: Given every key missing everywhere (and not being loaded by another caller), returns
    ///     the values it found. Called once per call, on a task of its own, which runs to its end even
    ///     when this caller is cancelled (single-key callers may be waiting for it); once more, with one key,
    ///     for a key whose joined load failed or was fenced before this call could wait for it.
    /// - Returns: The cached, stale and loaded values by key; keys `loadBatch` left out are absent (a
    ///   single-key caller that joined one gets ``CacheError/Code/notLoaded``).
    /// - Throws: ``CacheError/Code/invalidArgument`` for options out of range; what the tier reads throw (see
    ///   ``entries(forKeys:)``); what `loadBatch` or a joined load threw (unless fail-safe served every key of
    ///   the batch stale); ``CacheError/Code/loadTimedOut`` at the hard timeout; `CancellationError`.
    /// - Complexity: At most one bulk read per tier, one loader call, one store per loaded key and tier; with
    ///   tags or a tier that fences loads, one read of fences per tier and loaded key before the loader.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func values(
        forKeys keys: [Key],
        expiry: Expiry = .never,
        tags: Set<String> = [],
        options: LoadOptions = LoadOptions(),
        orLoad loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
    ) async throws -> [Key: Value] {
        // While a tier's invalidations are starting, misses wait for them (see `readBeforeLoadingDuringStart`).
        if relay.isStarting.withLock({ $0 }) {
            let found = try await values(forKeys: keys)
            if Set(keys).isSubset(of: found.keys) { return found }
            await waitForInvalidationStart()
        }
        let stamping = LoadStamping(cache: self, tags: tags)
        let store: @Sendable (UInt64, Key, Value) async -> Void = { [weak self] loadID, key, value in
            await self?.storeLoadedValue(
                value, forKey: key, expiry: expiry, loadID: loadID, options: options, tags: tags,
                note: stamping.note(for: key))
        }
        guard options.hasNoBehaviour else {
            return try await coordinator.values(
                forKeys: keys, options: options, clock: clock, expiry: expiry,
                read: { keys in try await self.entries(forKeys: keys) },
                readStale: { key in try await self.entryIncludingStale(forKey: key) },
                recheck: { [weak self] key in try? await self?.entry(forKey: key)?.value },
                loadBatch: stamping.loadBatch(loadBatch), store: store)
        }
        return try await coordinator.values(
            forKeys: keys,
            read: { keys in try await values(forKeys: keys) },
            recheck: { [weak self] key in try? await self?.entry(forKey: key)?.value },
            loadBatch: stamping.loadBatch(loadBatch), store: store)
    }

    /// Stores a loaded value in every tier unless the load was fenced or abandoned, or its key is being
    /// written or removed (see ``CoordinatorStorage/storeLoadedValue(ofLoad:_:)``). With `options`, the entry
    /// is kept stale for the longest grace they name (`CacheEntry/staleUntil`). With a `note`, each tier's copy
    /// is stored against its own stamp (a tier without one gets none), an entry another process stored is
    /// written as it is, and the load's lease is given up afterwards; without, every tier gets a plain copy.
    func storeLoadedValue(
        _ value: Value, forKey key: Key, expiry: Expiry, loadID: UInt64, options: LoadOptions = LoadOptions(),
        tags: Set<String> = [], note: LoadNote? = nil
    ) async {
        let stored = await coordinator.storeLoadedValue(ofLoad: loadID) {
            let now = clock.now
            let entry: CacheEntry<Value>
            if let landed = note?.landed {
                entry = landed
            } else {
                let expiresAt = expiry.expirationDate(from: now)
                entry = CacheEntry(
                    value: value, expiresAt: expiresAt, staleUntil: options.staleUntil(expiringAt: expiresAt),
                    tags: tags)
            }
            guard let note else { return await setEntry(entry, forKey: key, inTiers: tiers.indices, now: now) }
            return await setEntry(entry, forKey: key, stampedWith: note.stamps, now: now)
        }
        // After the store: a waiter in another process that finds the lease free and no entry takes it over.
        note?.release?()
        // As on write-back, a tier refusing the value by size is skipped quietly (see `isRefusedBySize`).
        guard let failures = stored?.filter({ !$0.isRefusedBySize }), !failures.isEmpty else { return }
        counters.withLock { statistics in
            for failure in failures { statistics.tiers[failure.index].errors += 1 }
        }
        for failure in failures {
            observer?(
                CacheEvent(
                    .writeBackFailed, "storing a loaded value into tier \(failure.index) (\(failure.name)) failed",
                    tierIndex: failure.index, error: failure.error))
        }
    }

    /// Stores a loaded entry in the tiers of `stamps`, each against its own stamp.
    func setEntry(
        _ entry: CacheEntry<Value>, forKey key: Key, stampedWith stamps: [Int: TierLoadStamp], now: Date
    ) async -> [CacheError.TierFailure] {
        await forEachIndexedTier(in: tiers.indices) { index, tier in
            guard let stamp = stamps[index] else { return }
            let capped = tier.capping(entry, now: now)
            switch stamp {
            case .plain: try await tier.handle.setEntry(capped, key)
            case .versions(let versions): try await tier.handle.setEntryTaggedAt(capped, key, versions)
            case .ticket(let ticket): try await tier.handle.setEntryWithTicket(capped, key, ticket)
            }
        }
    }
}

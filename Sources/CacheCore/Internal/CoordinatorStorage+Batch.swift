#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension CoordinatorStorage {
    /// The bulk load-once read every cache shares: reads `keys` once, then loads every key still missing
    /// in **one** call of `loadBatch`, sharing loads with single-key callers both ways (a key another
    /// caller is loading is joined, not loaded again; a single-key caller of a key in the batch joins the
    /// batch's load of it). The one exception: a joined load that fails or is fenced before this call can
    /// wait for it leaves its key to one more `loadBatch` call with that key alone.
    ///
    /// Each key's load is a load like any other: fenced by writes and removals of its key, stored through
    /// `store` only when not fenced, answered to every waiter. The batch runs on a task of its own and
    /// ends even when the caller is cancelled (single-key callers may be waiting for it); the caller then
    /// gets `CancellationError` once it ends.
    ///
    /// - Parameters:
    ///   - keys: The keys to read; duplicates are read and loaded once.
    ///   - read: The cache's bulk read: the live values of the keys it is given.
    ///   - recheck: The read a key's load makes first when the key changed since the caller's read.
    ///   - loadBatch: The caller's batch loader, given every key missing everywhere; it may leave keys out.
    ///   - store: Stores a loaded value, given its load's id.
    /// - Returns: The value of every key that was cached or loaded; keys the loader left out are absent.
    /// - Throws: What `read` threw; what `loadBatch` or a joined load threw; `CancellationError`.
    package func values(
        forKeys keys: [Key],
        read: ([Key]) async throws -> [Key: Value],
        recheck: @escaping @Sendable (Key) async -> Value?,
        loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value],
        store: @escaping @Sendable (_ loadID: UInt64, _ key: Key, _ value: Value) async -> Void
    ) async throws -> [Key: Value] {
        let unique = Self.distinct(keys)
        let sequenceSeen = changeSequence
        let found = try await read(unique)
        let missing = unique.filter { found[$0] == nil }
        guard !missing.isEmpty else { return found }
        return try await values(
            loading: missing, found: found, sequenceSeen: sequenceSeen, recheck: recheck, loadBatch: loadBatch,
            store: store)
    }

    /// The second half of ``values(forKeys:read:recheck:loadBatch:store:)``, for a caller that read the cache
    /// itself: loads `missing` (distinct keys that missed in a read that began after ``changeSequence`` read
    /// `sequenceSeen`) and returns them with `found`, the values that read found.
    ///
    /// - Throws: What `loadBatch` or a joined load threw; `CancellationError`.
    package func values(
        loading missing: [Key],
        found: [Key: Value],
        sequenceSeen: UInt64,
        recheck: @escaping @Sendable (Key) async -> Value?,
        loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value],
        store: @escaping @Sendable (_ loadID: UInt64, _ key: Key, _ value: Value) async -> Void
    ) async throws -> [Key: Value] {
        var found = found
        let plan = handle { $0.beginBatch(keys: missing, sequenceSeen: sequenceSeen) }
        let owned = plan.owned.map { OwnedLoad(key: $0.key, loadID: $0.loadID, recheckTiers: $0.recheckTiers) }
        let batch =
            owned.isEmpty
            ? nil
            : Task {
                await self.runBatch(owned, recheck: recheck, loadBatch: loadBatch, store: store)
            }
        // The keys others are loading are joined while the batch runs, so a load that ends meanwhile is
        // not missed and both wait at once.
        var results = await withTaskGroup(of: (Key, Result<Value, any Error>).self) { group in
            for key in plan.inFlight {
                group.addTask {
                    let result = await Result(catching: {
                        try await self.joinLoad(of: key, sequenceSeen: sequenceSeen) { loadID, _ in
                            // The load joined ended before this caller got to it. A load that succeeded
                            // stored its value, so the tiers are read again first: only a load that failed
                            // or was fenced leaves the key to one more loader call, as it would for a
                            // single-key caller arriving just after that load.
                            let owned = [OwnedLoad(key: key, loadID: loadID, recheckTiers: true)]
                            return Task {
                                _ = await self.runBatch(owned, recheck: recheck, loadBatch: loadBatch, store: store)
                            }
                        }
                    })
                    return (key, result)
                }
            }
            return await group.reduce(into: [Key: Result<Value, any Error>]()) { $0[$1.0] = $1.1 }
        }
        if let batch { results.merge(await batch.value) { joined, _ in joined } }
        var failure: (any Error)?
        for (key, result) in results {
            switch result {
            case .success(let value): found[key] = value
            case .failure(let error) where (error as? CacheError)?.code == .notLoaded: break
            case .failure(let error): failure = failure ?? error
            }
        }
        if let failure { throw failure }
        try Task.checkCancellation()
        return found
    }

    /// `keys` without repeats, in their first order.
    static func distinct(_ keys: [Key]) -> [Key] {
        var seen = Set<Key>()
        return keys.filter { seen.insert($0).inserted }
    }

    /// One key a batch loads.
    struct OwnedLoad: Sendable {
        let key: Key
        let loadID: UInt64
        let recheckTiers: Bool
    }

    /// The body of a batch's task: reads again the keys that changed, runs the batch loader once for the
    /// rest, stores each value and answers each key's waiters.
    func runBatch(
        _ owned: [OwnedLoad],
        recheck: @Sendable (Key) async -> Value?,
        loadBatch: @Sendable ([Key]) async throws -> [Key: Value],
        store: @Sendable (UInt64, Key, Value) async -> Void
    ) async -> [Key: Result<Value, any Error>] {
        var results: [Key: Result<Value, any Error>] = [:]
        var toLoad: [OwnedLoad] = []
        for load in owned {
            if load.recheckTiers, let value = await recheck(load.key) {
                results[load.key] = .success(value)
                finishLoad(load.loadID, with: .success(value))
            } else {
                toLoad.append(load)
            }
        }
        guard !toLoad.isEmpty else { return results }
        handle { $0.countLoad() }
        do {
            let values = try await loadBatch(toLoad.map(\.key))
            for load in toLoad {
                guard let value = values[load.key] else {
                    let result = Result<Value, any Error>.failure(
                        CacheError(.notLoaded, "the batch loader returned no value for this key"))
                    results[load.key] = result
                    finishLoad(load.loadID, with: result)
                    continue
                }
                await store(load.loadID, load.key, value)
                results[load.key] = .success(value)
                finishLoad(load.loadID, with: .success(value))
            }
        } catch {
            for load in toLoad {
                results[load.key] = .failure(error)
                finishLoad(load.loadID, with: .failure(error))
            }
        }
        notify(.loadFinished)
        return results
    }
}

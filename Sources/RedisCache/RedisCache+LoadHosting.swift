import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Load-once, with options, tags and bulk loads, comes from CacheCore's one extension of `LoadHostingCache`
// (Docs/Loading.md); a `RedisCache` gives it the single-flight table it keeps and its store of a loaded value.
// Loads are shared between the callers of one instance. Its store goes through a load ticket taken before the
// loader runs (`LoadFencingCache`), so a removal of the key, a clear or a tag removal by any process sharing
// the namespace since the load began keeps the loaded value out of Redis.
extension RedisCache: LoadHostingCache {
    /// The cache's load-once (its single-flight table and its store of loaded values), for the load calls
    /// `value(forKey:expiry:tags:options:orLoad:)` and `values(forKeys:expiry:tags:options:orLoad:)`; opaque
    /// outside Strata.
    ///
    /// A value loaded without an expiry is kept for ``RedisCacheConfiguration/maximumTimeToLive``, as a
    /// `setValue(_:forKey:expiry:)` without one is.
    ///
    /// - Complexity: O(1): one atomic load once made; the first call creates the load-once coordinator.
    public var loadHost: LoadHost<Key, Value> {
        loadOnce.host { coordinator in
            LoadHost(
                coordinator: coordinator, defaultExpiry: .never, stampsEveryLoad: true,
                stamp: { [weak self] keys, tags in
                    guard let self else { return [:] }
                    return await tickets(forKeys: keys, tags: tags)
                },
                store: { [weak self] loadID, key, entry, stamp, _ in
                    await self?.storeLoaded(entry, forKey: key, stampedWith: stamp, loadID: loadID, in: coordinator)
                },
                turn: { [weak self] key in await self?.loadTurn(forKey: key) ?? .load(release: {}) },
                isLeased: { [weak self] key in await self?.isLoadLeased(forKey: key) ?? false })
        }
    }

    /// A load ticket for each of `keys`, taken concurrently (one round trip each); a key whose ticket could
    /// not be taken (Redis unreachable) is left out, so its loaded value is returned but not stored.
    private func tickets(forKeys keys: [Key], tags: Set<String>) async -> [Key: LoadStamp] {
        await withTaskGroup(of: (Key, CacheLoadTicket?).self) { group in
            for key in keys {
                group.addTask { (key, try? await self.loadTicket(forKey: key, tags: tags)) }
            }
            var stamps: [Key: LoadStamp] = [:]
            for await (key, ticket) in group {
                if let ticket { stamps[key] = LoadStamp(tagVersions: ticket.tagVersions, ticket: ticket) }
            }
            return stamps
        }
    }

    /// Stores a loaded entry through its ticket unless a write or removal through this instance fenced its
    /// load; reports a failure to the observer as ``CacheEvent/Kind/writeBackFailed``. A write or removal of
    /// the key through this instance that begins while the store runs waits for it.
    private func storeLoaded(
        _ entry: CacheEntry<Value>, forKey key: Key, stampedWith stamp: LoadStamp, loadID: UInt64,
        in coordinator: CoordinatorStorage<Key, Value>
    ) async {
        guard let ticket = stamp.ticket else { return }
        let failure = await coordinator.storeLoadedValue(ofLoad: loadID) { () async -> (any Error)? in
            do {
                _ = try await setEntry(entry, forKey: key, ticket: ticket)
                return nil
            } catch {
                return error
            }
        }
        if let failure = failure ?? nil { report(.writeBackFailed, "cannot store a loaded value: \(failure)") }
    }
}

import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Load-once, with options, tags and bulk loads, comes from CacheCore's one extension of `LoadHostingCache`
// (Docs/Loading.md); a `MemoryCache` gives it the single-flight table it keeps and its store of a loaded
// value. Its fast path, a hit read on the caller's thread, is the extension's for every `SynchronousCache`.
extension MemoryCache: LoadHostingCache {
    /// The cache's load-once (its single-flight table and its store of loaded values), for the load calls
    /// `value(forKey:expiry:tags:options:orLoad:)` and `values(forKeys:expiry:tags:options:orLoad:)`; opaque
    /// outside Strata.
    ///
    /// - Complexity: O(1): one atomic load once made; the first call creates the load-once coordinator.
    @inlinable
    public var loadHost: LoadHost<Key, Value> {
        // Inlinable, so that a load-once hit, which reads it before the cache, pays one atomic load for it
        // rather than a call into this generic class's unspecialized getter.
        loadOnce.host { makeLoadHost($0) }
    }

    /// The host, made once by the first load.
    @usableFromInline
    func makeLoadHost(_ coordinator: CoordinatorStorage<Key, Value>) -> LoadHost<Key, Value> {
        LoadHost(
            coordinator: coordinator, defaultExpiry: defaultExpiry,
            stamp: { [weak self] keys, tags in
                guard let self else { return [:] }
                // Read now, before the loader: a tag removed later is past these versions.
                let versions = tags.isEmpty ? CacheTagVersions() : tagRegistry.versions(of: tags)
                let stamp = LoadStamp(tagVersions: versions)
                return Dictionary(keys.map { ($0, stamp) }, uniquingKeysWith: { first, _ in first })
            },
            store: { [weak self] loadID, key, entry, stamp, now in
                self?.storeLoaded(entry, forKey: key, stampedWith: stamp, at: now, loadID: loadID, in: coordinator)
            })
    }

    /// Stores a loaded entry unless a write or removal fenced its load; a value too large to keep is not
    /// stored (its callers still get it).
    private func storeLoaded(
        _ entry: CacheEntry<Value>, forKey key: Key, stampedWith stamp: LoadStamp, at now: Date?, loadID: UInt64,
        in coordinator: CoordinatorStorage<Key, Value>
    ) {
        // The cost function and the clock are the caller's code: run before the gate is taken.
        let cost = max(costFunction(entry.value), 0)
        let tagStamp = entry.tags.isEmpty ? nil : tagRegistry.stamp(entry.tags, at: stamp.tagVersions)
        // The reading the expiry was resolved against, as a write's: an entry already expired is not stored.
        let expiresAt = entry.expiresAt?.timeIntervalSinceReferenceDate ?? .infinity
        let now = entry.expiresAt == nil ? -.infinity : (now ?? clock.now).timeIntervalSinceReferenceDate
        let staleUntil = entry.staleUntil?.timeIntervalSinceReferenceDate
        let released = coordinator.storeLoadedValueAtOnce(ofLoad: loadID) {
            withTable(for: key) {
                $0.store(
                    entry.value, forKey: key, cost: cost, expiresAt: expiresAt, now: now, staleUntil: staleUntil,
                    tagStamp: tagStamp)
            }
        }
        // Replaced and evicted values are released here, after the gate and the shard's lock are dropped.
        withExtendedLifetime(released) {}
    }

    /// Runs `body`, a write or removal of `key` (every key when `nil`), fenced against loads in flight once
    /// the cache has loaded; before its first load, just runs it. Not inlinable: the inlined writes call it
    /// without knowing the coordinator's layout.
    @usableFromInline
    func fenced(_ key: Key?, _ body: () throws -> Void) rethrows {
        try loadOnce.fenced(key, body)
    }
}

import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Load-once, with options, tags and bulk loads, comes from CacheCore's one extension of `LoadHostingCache`
// (Docs/Loading.md); a `DiskCache` gives it the single-flight table it keeps and its store of a loaded value.
// Loads are shared between the callers of one instance: other instances and processes sharing the folder load
// on their own, and are fenced by the tag counters on disk only.
extension DiskCache: LoadHostingCache {
    /// The cache's load-once (its single-flight table and its store of loaded values), for the load calls
    /// `value(forKey:expiry:tags:options:orLoad:)` and `values(forKeys:expiry:tags:options:orLoad:)`; opaque
    /// outside Strata.
    ///
    /// - Complexity: O(1): one atomic load once made; the first call creates the load-once coordinator.
    public var loadHost: LoadHost<Key, Value> {
        loadOnce.host { coordinator in
            LoadHost(
                coordinator: coordinator, defaultExpiry: configuration.defaultExpiry,
                stamp: { [weak self] keys, tags in
                    guard let self else { return [:] }
                    // Read now, before the loader; a store whose counters cannot be read stores nothing.
                    var versions = CacheTagVersions()
                    if !tags.isEmpty {
                        guard let read = try? await tagVersions(for: tags) as CacheTagVersions else { return [:] }
                        versions = read
                    }
                    let stamp = LoadStamp(tagVersions: versions)
                    return Dictionary(keys.map { ($0, stamp) }, uniquingKeysWith: { first, _ in first })
                },
                store: { [weak self] loadID, key, entry, stamp, _ in
                    await self?.storeLoaded(entry, forKey: key, stampedWith: stamp, loadID: loadID, in: coordinator)
                })
        }
    }

    /// Stores a loaded entry on the I/O queue unless a write or removal fenced its load; reports a failure
    /// (a full disk, a value too large for ``DiskCacheConfiguration/byteLimit``, a value the codec cannot
    /// encode) to the observer as ``CacheEvent/Kind/writeBackFailed``.
    private func storeLoaded(
        _ entry: CacheEntry<Value>, forKey key: Key, stampedWith stamp: LoadStamp, loadID: UInt64,
        in coordinator: CoordinatorStorage<Key, Value>
    ) async {
        do {
            try await onIOQueue {
                // The codec and the tags' counters are read before the gate is taken.
                let prepared: PreparedWrite
                do {
                    prepared = try self.prepareWrite(entry, forKey: key, taggedAt: stamp.tagVersions)
                } catch let error as UnreadableTagVersions {
                    throw error.cause
                }
                // Events the write reports reach the observer after the gate is released, so an observer that
                // writes to this cache cannot wait on the gate its own call holds.
                let written = self.engine.deferringEvents {
                    coordinator.storeLoadedValueAtOnce(ofLoad: loadID) { Result { try self.perform(prepared) } }
                }
                try written?.get()
            }
        } catch {
            engine.report(.writeBackFailed, "cannot store a loaded value", path: nil, error: error)
        }
    }
}

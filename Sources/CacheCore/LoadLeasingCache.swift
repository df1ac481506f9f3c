/// A tier that shares one load of a key among processes: before this process loads the key, the tier either
/// hands it the lease on loading it, or waits for the process that holds it and returns what that process
/// stored (the Redis tier: Docs/Loading.md, "Across processes").
///
/// Package-level: the load paths of a `MultiCache` and of a tier's own load-once ask it; users configure it on
/// the tier.
///
/// Thread safety: conformers are `Sendable`; every method may be called from any task.
@usableFromInline
package protocol LoadLeasingCache<Key, Value>: LoadFencingCache {
    /// Waits for this process's turn to load `key`: the lease (`.load`), or the entry another process loaded
    /// and stored meanwhile (`.landed`). Never throws: when the tier cannot tell (unreachable, a wait past its
    /// limit), the turn is this process's, as if nothing were shared.
    func loadTurn(forKey key: Key) async -> LoadTurn<Value>

    /// Whether a process (this one included) holds the lease on loading `key` now: a caller that holds a
    /// fail-safe value then serves it at once instead of waiting for that load. `false` when leases are off or
    /// the tier cannot tell.
    func isLoadLeased(forKey key: Key) async -> Bool
}

/// Whose turn it is to load a key; see ``LoadLeasingCache``.
@usableFromInline
package enum LoadTurn<Value: Sendable>: Sendable {
    /// This process loads. Call `release` once the loaded value is stored, or the load failed, so the next
    /// waiter need not wait for the lease to expire; it never throws and returns at once (it runs on a task
    /// of its own).
    case load(release: @Sendable () -> Void)
    /// Another process loaded the key and stored this entry: serve it, and load nothing.
    case landed(CacheEntry<Value>)
}

/// What a tier tells the caches above it to forget: some keys, every entry carrying some tags, or
/// everything.
///
/// A tier that learns of changes made elsewhere publishes these through ``CacheInvalidationSource``:
/// the Redis tier turns its server's client-tracking messages into them, so a write made by another
/// process (or with `redis-cli`) reaches this process's faster tiers. An invalidation only ever removes
/// copies; it never carries a value.
///
/// ```swift
/// switch invalidation {
/// case .keys(let keys): keys.forEach(memory.removeEntry(forKey:))
/// case .tags: memory.removeAll()  // a cache without tags forgets everything
/// case .all: memory.removeAll()
/// }
/// ```
///
/// Thread safety: a plain value; `Sendable`.
public enum CacheInvalidation<Key: Hashable & Sendable>: Sendable {
    /// These keys changed or were removed: copies of them are stale.
    case keys([Key])
    /// The version of each of these tags changed: copies of entries that carry one of them are stale.
    case tags([String])
    /// Anything may have changed (the namespace was cleared, or the source lost track of changes for a
    /// while): every copy is stale.
    case all
}

extension CacheInvalidation: Equatable where Key: Equatable {}

/// A cache that publishes invalidations: changes to what it holds that were made by someone else, so
/// that copies kept in faster tiers can be dropped.
///
/// A `MultiCache` subscribes to every tier that conforms (found at run time with
/// `tier.cache as? any CacheInvalidationSource<Key>`) and removes the published keys from the tiers
/// above that tier, fencing loads and write-backs of them as its own `removeEntry(forKey:)` does.
///
/// - **Delivery.** An observer is called directly by the source, on the source's own thread (the Redis
///   tier: its tracking connection's I/O thread), one invalidation at a time per source and in the order
///   the source learned them; the source buffers nothing for slow observers. An observer must return
///   quickly, must not block, and must not call back into the source synchronously: hand longer work to
///   a task of its own.
/// - **Meaning.** ``CacheInvalidation/keys(_:)`` may name keys the observer does not hold, and may repeat
///   the observer's own writes; removing a copy is always safe, so neither is an error.
///   ``CacheInvalidation/all`` is published whenever the source may have missed a change (for the
///   Redis tier: when its tracking connection is lost, and again once tracking runs again).
///
/// Thread safety: conformers are `Sendable`; every method may be called from any thread.
public protocol CacheInvalidationSource<Key>: Sendable {
    /// The key type of the invalidations published.
    associatedtype Key: Hashable & Sendable

    /// Registers `observer` for every invalidation published from now on.
    ///
    /// The source may start work (the Redis tier opens its tracking connection) when the first observer
    /// registers and stop it when the last one is cancelled. A source that cannot vouch for changes made
    /// before the registration publishes ``CacheInvalidation/all`` first (the Redis tier: once tracking
    /// is on, or at once, on the registering thread, when it was on already).
    ///
    /// - Parameter observer: Called with each invalidation, on the source's thread, never concurrently
    ///   with itself; see the protocol's *Delivery* rules.
    /// - Returns: The registration; ``CacheInvalidationSubscription/cancel()`` (or releasing it) ends it.
    func addInvalidationObserver(
        _ observer: @escaping @Sendable (CacheInvalidation<Key>) -> Void
    ) -> CacheInvalidationSubscription
}

/// One observer's registration with a ``CacheInvalidationSource``: cancelling it, or releasing the last
/// reference to it, unregisters the observer.
///
/// Once ``cancel()`` returns, the observer is not called again, except for a call already under way on
/// the source's thread.
///
/// Thread safety: `Sendable`; ``cancel()`` may be called from any thread, any number of times.
public final class CacheInvalidationSubscription: Sendable {
    private let cancellation: Locked<(@Sendable () -> Void)?>

    /// Creates a registration that runs `cancel` once, on the first ``cancel()`` or when released.
    ///
    /// - Parameter cancel: Unregisters the observer; for conformers of ``CacheInvalidationSource``.
    public init(cancel: @escaping @Sendable () -> Void) {
        cancellation = Locked(cancel)
    }

    /// Unregisters the observer. Calls after the first do nothing.
    public func cancel() {
        let cancel = cancellation.withLock { cancellation in
            defer { cancellation = nil }
            return cancellation
        }
        cancel?()
    }

    deinit {
        cancel()
    }
}

/// A ``CacheInvalidationSource`` that says when it has begun to see changes, so that a cache above it can
/// hold its first loads until then (package access: the Redis tier conforms, `MultiCache` asks).
///
/// A source that publishes ``CacheInvalidation/all`` once it starts seeing changes (the Redis tier: when
/// its tracking connection is first on) fences every load in flight at that moment, since a change made
/// before then was not seen. A load that begins after that `.all` has nothing to miss; holding the loads
/// that would otherwise begin just before it costs a moment at start and saves running their loaders twice.
///
/// Thread safety: conformers are `Sendable`; the method may be called from any thread.
package protocol InvalidationStartReporting<Key>: CacheInvalidationSource {
    /// Calls `started` once, when the source's first attempt to see changes has ended: after it published
    /// the `.all` that starts coherence to its observers, or after that attempt failed (nothing published);
    /// at once when it has ended already, or when the source publishes nothing at all.
    ///
    /// - Parameter started: Called on the source's thread or the caller's; it must return quickly.
    func whenInvalidationsStart(_ started: @escaping @Sendable () -> Void)
}

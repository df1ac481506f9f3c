import CacheCore

/// What a ``MultiCache`` keeps for the invalidations its tiers publish: the subscriptions, and the
/// removals fenced but not yet carried out.
///
/// An invalidation is taken in two steps. On the publisher's thread, at once: the coordinator's fence
/// goes up and the removal is queued here (see `MultiCache+Invalidation.swift`). On one task at a time
/// (the drain): the queued removals run against the tiers above their publishers, then their fences
/// come down. The queue is bounded: past ``keyLimit`` queued keys, what is queued collapses into one
/// removal of everything.
///
/// Thread safety: `state` is only touched under its lock, which is never held across an `await` or a
/// call into a tier or an observer; the coordinator's lock may be taken inside it, never the reverse.
final class InvalidationRelay<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// One fenced removal: its fence, and the tiers (`0..<tiersAbove`) it removes from.
    struct Removal: Sendable {
        var fence: CoordinatorStorage<Key, Value>.InvalidationFence
        var tiersAbove: Int
        /// For a tag invalidation: the tags whose entries to remove (the fence covers every key, since
        /// any read or load in flight might carry one of them).
        var tags: [String]? = nil
    }

    struct State {
        var subscriptions: [CacheInvalidationSubscription] = []
        var queued: [Removal] = []
        var queuedKeyCount = 0
        /// `n` when the queue holds a removal of everything from tiers `0..<n`: a later invalidation
        /// published by tier `n` or a faster one is covered by it.
        var queuedWipe: Int?
        var isDraining = false
        /// Told of each invalidation once its removal has run (tests wait for it).
        var appliedObserver: (@Sendable (CacheInvalidation<Key>) -> Void)?
    }

    /// Queued keys past which the queue collapses into one removal of everything.
    static var keyLimit: Int { 4_096 }

    let state = Locked(State())
}

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
        /// The tier indices subscribed to.
        var publishers: [Int] = []
        var queued: [Removal] = []
        var queuedKeyCount = 0
        /// `n` when the queue holds a removal of everything from tiers `0..<n`: a later invalidation
        /// published by tier `n` or a faster one is covered by it.
        var queuedWipe: Int?
        var isDraining = false
        /// Told of each invalidation once its removal has run (tests wait for it).
        var appliedObserver: (@Sendable (CacheInvalidation<Key>) -> Void)?

        /// Publishers (tier indices) whose first attempt to see changes has not ended and been applied: loads
        /// wait for them (see `MultiCache+Invalidation.swift`, "start").
        var starting: Set<Int> = []
        /// Publishers whose first attempt ended while removals were queued or running: they stop holding
        /// loads once the batch that holds their first `.all` has been applied.
        var startedBehindQueue: Set<Int> = []
        var startWaiters: [CheckedContinuation<Void, Never>] = []

        /// Per publisher, per tag: tag removals this cache made through that tier whose echo (the tier's
        /// `.tags` for its own version-counter write) has not come back yet. See ``takeForeignTags(_:from:)``.
        var ownTagRemovals: [Int: [String: Int]] = [:]

        /// Returns the tags of a `.tags` invalidation from `publisher` that are not the echo of this cache's
        /// own removals, consuming one awaited echo per tag.
        ///
        /// An echo needs no fence: pushes arrive in the server's order, so a push consumed here reports
        /// either the own removal's counter write or another client's that the server ran before it. The own
        /// removal covers both: every load and read in flight when that write ran began before the removal
        /// ended and is fenced by it, nothing stores while it runs, and it advances the tag in every tier
        /// before it ends. A removal the server ran after the own one arrives after the echo, when nothing is
        /// awaited any more, and is applied.
        mutating func takeForeignTags(_ tags: [String], from publisher: Int) -> [String] {
            guard var awaited = ownTagRemovals[publisher], !awaited.isEmpty else { return tags }
            defer { ownTagRemovals[publisher] = awaited }
            return tags.filter { tag in
                guard let count = awaited[tag] else { return true }
                awaited[tag] = count > 1 ? count - 1 : nil
                return false
            }
        }

        /// Forgets the echoes awaited from `publisher` for `tag` (`nil`: every tag): their removal failed
        /// somewhere, or the publisher may have lost them; what comes is then applied like anyone's.
        mutating func forgetEchoes(from publisher: Int, of tag: String? = nil) {
            guard let tag else { return ownTagRemovals[publisher] = nil }
            ownTagRemovals[publisher]?[tag] = nil
        }
    }

    /// Tags awaited past which a publisher's awaited echoes are forgotten (applied as others' when they come).
    static var echoLimit: Int { 1_024 }

    /// Whether `state.starting` is non-empty, written only under `state`'s lock: the load path reads this
    /// non-generic flag alone once every publisher has started.
    let isStarting = Locked(false)

    /// Queued keys past which the queue collapses into one removal of everything.
    static var keyLimit: Int { 4_096 }

    let state = Locked(State())
}

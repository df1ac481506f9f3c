import CacheCore

extension MultiCache {
    /// Subscribes to every tier that publishes invalidations (a ``CacheInvalidationSource``, such as the
    /// Redis tier); called once, by the initializer.
    ///
    /// The observers hold the cache weakly, and the subscriptions are released with it, so a `MultiCache`
    /// and its tiers never keep each other alive.
    func subscribeToInvalidations() {
        var subscriptions: [CacheInvalidationSubscription] = []
        for (index, tier) in tiers.enumerated() where index > 0 {
            guard let source = tier.cache as? any CacheInvalidationSource<Key> else { continue }
            subscriptions.append(
                source.addInvalidationObserver { [weak self] invalidation in
                    self?.receive(invalidation, fromTier: index)
                })
        }
        relay.state.withLock { $0.subscriptions = subscriptions }
    }

    /// Takes an invalidation published by tier `publisher`, on the publisher's thread: fences the keys at
    /// once, as ``removeEntry(forKey:)`` and ``removeAll()`` do, and queues their removal from the tiers
    /// above the publisher.
    ///
    /// `.tags` fences every key (a read or load in flight may carry one of the tags) and removes the
    /// tags' entries, through `removeAll(taggedWith:)`, from the tiers above.
    func receive(_ invalidation: CacheInvalidation<Key>, fromTier publisher: Int) {
        let keys: [Key]?
        var tags: [String]?
        switch invalidation {
        case .keys(let invalidated):
            guard !invalidated.isEmpty else { return }
            keys = invalidated
        case .tags(let invalidated):
            guard !invalidated.isEmpty else { return }
            keys = nil
            tags = invalidated
        case .all:
            keys = nil
        }
        let startDrain = relay.state.withLock { state -> Bool in
            if let wipe = state.queuedWipe, publisher <= wipe { return false }
            var fenced = keys
            if let keys, state.queuedKeyCount + keys.count > InvalidationRelay<Key, Value>.keyLimit {
                fenced = nil
            }
            state.queued.append(
                .init(fence: coordinator.beginInvalidation(of: fenced), tiersAbove: publisher, tags: tags))
            if let fenced {
                state.queuedKeyCount += fenced.count
            } else if tags == nil {
                state.queuedWipe = max(state.queuedWipe ?? 0, publisher)
            }
            defer { state.isDraining = true }
            return !state.isDraining
        }
        if startDrain {
            Task { await self.drainInvalidations() }
        }
    }

    /// Runs the queued removals until the queue is empty; one drain at a time.
    private func drainInvalidations() async {
        while true {
            let (removals, observer) = relay.state.withLock { state in
                defer {
                    state.queued = []
                    state.queuedKeyCount = 0
                    state.queuedWipe = nil
                }
                // Decided under the lock: an invalidation queued after this sees no drain and starts one.
                if state.queued.isEmpty { state.isDraining = false }
                return (state.queued, state.appliedObserver)
            }
            guard !removals.isEmpty else { return }
            for removal in removals { await coordinator.waitForStores(before: removal.fence) }
            for removal in removals {
                let failures = await forEachTier(in: 0..<removal.tiersAbove) { tier in
                    if let keys = removal.fence.keys {
                        for key in keys { try await tier.handle.removeEntry(key) }
                    } else if let tags = removal.tags {
                        for tag in tags { try await tier.handle.removeAllTagged(tag) }
                    } else {
                        try await tier.handle.removeAll()
                    }
                }
                reportInvalidationFailures(failures)
            }
            for removal in removals {
                coordinator.endInvalidation(removal.fence)
                observer?(
                    removal.fence.keys.map(CacheInvalidation.keys) ?? removal.tags.map(CacheInvalidation.tags) ?? .all)
            }
        }
    }

    /// Counts and reports tiers that failed to remove entries another tier (or the authority's miss) showed
    /// to be out of date.
    func reportInvalidationFailures(_ failures: [CacheError.TierFailure]) {
        guard !failures.isEmpty else { return }
        counters.withLock { statistics in
            for failure in failures { statistics.tiers[failure.index].errors += 1 }
        }
        for failure in failures {
            observer?(
                CacheEvent(
                    .invalidationFailed,
                    "removing invalidated entries from tier \(failure.index) (\(failure.name)) failed",
                    tierIndex: failure.index, error: failure.error))
        }
    }

    /// Sets the closure told of each invalidation once its removal from the tiers above has run and its
    /// fence is down, replacing any earlier one; for tests, which wait for these moments.
    package func observeAppliedInvalidations(_ observer: (@Sendable (CacheInvalidation<Key>) -> Void)?) {
        relay.state.withLock { $0.appliedObserver = observer }
    }
}

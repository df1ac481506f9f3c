import CacheCore

extension MultiCache {
    /// Subscribes to every tier that publishes invalidations (a ``CacheInvalidationSource``, such as the
    /// Redis tier); called once, by the initializer.
    ///
    /// The observers hold the cache weakly, and the subscriptions are released with it, so a `MultiCache`
    /// and its tiers never keep each other alive.
    func subscribeToInvalidations() {
        var subscriptions: [CacheInvalidationSubscription] = []
        var starting: [(index: Int, source: any InvalidationStartReporting<Key>)] = []
        for (index, tier) in tiers.enumerated() where index > 0 {
            guard let source = tier.cache as? any CacheInvalidationSource<Key> else { continue }
            if let reporting = source as? any InvalidationStartReporting<Key> {
                // Before the observer: its first `.all` may come at once, on this thread.
                starting.append((index, reporting))
                relay.state.withLock { state in
                    state.starting.insert(index)
                    relay.isStarting.withLock { $0 = true }
                }
            }
            subscriptions.append(
                source.addInvalidationObserver { [weak self] invalidation in
                    self?.receive(invalidation, fromTier: index)
                })
        }
        relay.state.withLock { state in
            state.subscriptions = subscriptions
            state.publishers = tiers.indices.filter { $0 > 0 && tiers[$0].cache is any CacheInvalidationSource<Key> }
        }
        for (index, source) in starting {
            source.whenInvalidationsStart { [weak self] in self?.publisherStarted(index) }
        }
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
            // The echo of this cache's own removal is not fenced again (see `takeForeignTags`).
            let foreign = relay.state.withLock { $0.takeForeignTags(invalidated, from: publisher) }
            guard !foreign.isEmpty else { return }
            keys = nil
            tags = foreign
        case .all:
            keys = nil
        }
        let startDrain = relay.state.withLock { state -> Bool in
            // The publisher may have lost track of anything, echoes of this cache's removals included.
            if keys == nil, tags == nil { state.forgetEchoes(from: publisher) }
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
            let (removals, observer, started) = relay.state.withLock { state in
                defer {
                    state.queued = []
                    state.queuedKeyCount = 0
                    state.queuedWipe = nil
                    state.startedBehindQueue = []
                }
                // Decided under the lock: an invalidation queued after this sees no drain and starts one.
                if state.queued.isEmpty { state.isDraining = false }
                return (state.queued, state.appliedObserver, state.startedBehindQueue)
            }
            // Their first `.all` was queued before they reported, so it is in this batch or an earlier one.
            defer { if !started.isEmpty { openStart(of: started) } }
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

    // MARK: - Start

    // A publisher that reports its start (`InvalidationStartReporting`: the Redis tier) fences every load in
    // flight with the `.all` it publishes once it sees changes, and every load that begins while that `.all`
    // is being applied: a load that began before had its loader run while changes went unseen. So loads wait
    // until each such publisher's first attempt has ended and its `.all` has been applied (a few
    // milliseconds at start; when the attempt fails, no longer than the tier's connect and handshake
    // deadlines, and loads then go on as they would with tracking down). Hits are served meanwhile.

    /// Called once `publisher`'s first attempt to see changes has ended (its `.all` is queued, if any).
    private func publisherStarted(_ publisher: Int) {
        let now = relay.state.withLock { state -> Bool in
            guard state.queued.isEmpty, !state.isDraining else {
                state.startedBehindQueue.insert(publisher)
                return false
            }
            return true
        }
        if now { openStart(of: [publisher]) }
    }

    /// Stops holding loads for `publishers`; resumes the waiting loads once none is left.
    private func openStart(of publishers: Set<Int>) {
        let waiters = relay.state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.starting.subtract(publishers)
            guard state.starting.isEmpty else { return [] }
            relay.isStarting.withLock { $0 = false }
            defer { state.startWaiters = [] }
            return state.startWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once every publisher that reports its start has started and its first `.all` has been applied;
    /// at once after that (one lock, non-generic).
    func waitForInvalidationStart() async {
        guard relay.isStarting.withLock({ $0 }) else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = relay.state.withLock { state -> Bool in
                guard !state.starting.isEmpty else { return true }
                state.startWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// What a load-once call does first: while a publisher is starting, reads `key` (a hit is served at once)
    /// and, on a miss, waits for the start (``waitForInvalidationStart()``) so that its load begins after it.
    ///
    /// - Returns: The value of a hit while starting; `nil` otherwise (then load as usual).
    func readBeforeLoadingDuringStart(_ key: Key) async throws -> Value? {
        guard relay.isStarting.withLock({ $0 }) else { return nil }
        if let value = try await entry(forKey: key)?.value { return value }
        await waitForInvalidationStart()
        return nil
    }

    // MARK: - Echoes of this cache's own tag removals

    /// Records that this cache is about to advance `tag` in its tiers: each publisher's echo of it is then
    /// not fenced again. Called inside the removal's fence, before any tier is called.
    func awaitEchoes(ofRemovalOf tag: String) {
        relay.state.withLock { state in
            for publisher in state.publishers {
                var awaited = state.ownTagRemovals[publisher] ?? [:]
                if awaited.count >= InvalidationRelay<Key, Value>.echoLimit, awaited[tag] == nil { awaited = [:] }
                awaited[tag, default: 0] += 1
                state.ownTagRemovals[publisher] = awaited
            }
        }
    }

    /// After the removal of `tag` ran: a publisher at or below a tier that failed may not have advanced the
    /// tag, or the tiers above it did not drop its entries; its echo (if any) is then applied as anyone's.
    func settleEchoes(ofRemovalOf tag: String, failures: [CacheError.TierFailure]) {
        guard let lowestFailure = failures.map(\.index).min() else { return }
        relay.state.withLock { state in
            for publisher in state.publishers where publisher >= lowestFailure {
                state.forgetEchoes(from: publisher, of: tag)
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

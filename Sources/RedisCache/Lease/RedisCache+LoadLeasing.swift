import CacheCore

// The lease in the load path (issue 27, part 3): one process in the fleet loads a key every process misses at
// once; the others wait for its value, woken by the tracking push of its store. Efficiency only: correctness is
// the load ticket's fenced store.
extension RedisCache: LoadLeasingCache {
    /// Takes the lease on loading `key`, or waits for its holder's value; see `LoadLeasingCache`.
    ///
    /// - With ``RedisCacheConfiguration/loadLease`` `nil`, with Redis unreachable or failing, or after
    ///   ``RedisCacheConfiguration/LoadLease/maximumWait``: `.load` without a lease (load once per process).
    /// - A lease found free after a wait (its holder ended without storing, or it expired) is taken over; the
    ///   entry is read once more first, since another holder may have stored between the look and the take.
    ///   A waiter that finds another process took it over waits for that holder afresh (at most three times),
    ///   so a dead holder costs one more load, not one per waiter: one that missed the moment the lease was
    ///   free tells a holder that took it after its wait began by the lease's remaining time.
    ///
    /// - Complexity: One round trip when the lease is free; while waiting, two per look (see
    ///   ``waitForEntry(forKey:until:pollInterval:)``).
    @usableFromInline
    package func loadTurn(forKey key: Key) async -> LoadTurn<Value> {
        guard let policy = configuration.loadLease else {
            countLeaseTurn(\.unleased)
            return .load(release: {})
        }
        var waitBegan = ContinuousClock.now
        var deadline = waitBegan + policy.maximumWait
        var waited = false
        var sawLeaseFree = false
        var finalLook = false
        var takeovers = 0
        // The first ask takes no lease while the entry exists: this process's read may have missed just before
        // another's load stored and gave its lease up (a second load in 4 of 100 trials of 8 processes).
        var checksEntry = true
        while !Task.isCancelled {
            guard
                let acquisition = try? await acquireLease(
                    forKey: key, duration: policy.duration, unlessEntryExists: checksEntry)
            else { break }
            switch acquisition {
            case .entryExists:
                checksEntry = false
                if let entry = try? await readEntry(forKey: key, includingStale: false) {
                    countLeaseTurn(\.landed)
                    return .landed(entry)
                }
                // Only a stale or dead entry: it is this load's to replace.
                continue
            case .acquired(let lease):
                if waited, let entry = try? await readEntry(forKey: key, includingStale: false) {
                    release(lease)()
                    countLeaseTurn(\.landed)
                    return .landed(entry)
                }
                countLeaseTurn(\.held)
                state.withLock { $0.heldLeases[lease.name] = lease }
                return .load(release: releaseUnlessStored(lease))
            case .heldElsewhere:
                if sawLeaseFree || finalLook {
                    // Another process took over from a holder that ended or died, or (after the deadline) still
                    // the first holder: only a lease younger than this wait is a new holder's. A lease gone
                    // since the ask above (age zero) was given up just now, most often by a new holder that
                    // stored: look again as after a takeover (loading unleased here ran a dead runner's command
                    // once per waiter whose deadline fell while the waiter that took over ran it).
                    let isNewHolder: Bool
                    if sawLeaseFree {
                        isNewHolder = true
                    } else {
                        do {
                            let age = try await leaseRemaining(forKey: key).map { policy.duration - $0 } ?? .zero
                            isNewHolder = age < ContinuousClock.now - waitBegan
                        } catch {
                            isNewHolder = false
                        }
                    }
                    guard isNewHolder, takeovers < 3 else { break }
                    takeovers += 1
                    (sawLeaseFree, finalLook) = (false, false)
                    waitBegan = ContinuousClock.now
                    deadline = waitBegan + policy.maximumWait
                }
                waited = true
                countLeaseTurn(\.waited)
                let outcome = try? await waitForEntry(forKey: key, until: deadline, pollInterval: policy.pollInterval)
                switch outcome {
                case .entry(let entry, _)?:
                    countLeaseTurn(\.landed)
                    return .landed(entry)
                case .leaseFree?:
                    sawLeaseFree = true
                    continue
                case .timedOut?:
                    // One last ask: the lease may have expired just now, or been taken over by another waiter.
                    guard finalLook else {
                        finalLook = true
                        continue
                    }
                case nil:
                    break
                }
            }
            break
        }
        countLeaseTurn(\.unleased)
        return .load(release: {})
    }

    /// Whether any process holds the lease on loading `key` now; see `LoadLeasingCache`.
    ///
    /// - Complexity: One round trip; none with ``RedisCacheConfiguration/loadLease`` `nil`.
    @usableFromInline
    package func isLoadLeased(forKey key: Key) async -> Bool {
        guard configuration.loadLease != nil, let name = try? entryName(try Self.canonicalBytes(of: key)) else {
            return false
        }
        guard (try? await isLeaseHeld(onEntry: name)) == true else { return false }
        countLeaseTurn(\.servedStale)
        return true
    }

    /// Gives `lease` up on a task of its own: a caller need not wait for the round trip, and a failure only
    /// leaves the lease to expire.
    private func release(_ lease: RedisLease) -> @Sendable () -> Void {
        { [weak self] in
            Task { _ = try? await self?.releaseLease(lease) }
        }
    }

    /// Gives `lease` up like ``release(_:)`` unless the load's fenced store gave it up already
    /// (``storeFenced(_:name:milliseconds:keyVersion:)``): the usual end of a load that stored.
    private func releaseUnlessStored(_ lease: RedisLease) -> @Sendable () -> Void {
        { [weak self] in
            guard let self, forgetHeldLease(lease) else { return }
            Task { _ = try? await self.releaseLease(lease) }
        }
    }

    /// Stops tracking `lease` as held by a load turn; returns whether it was.
    @discardableResult
    func forgetHeldLease(_ lease: RedisLease) -> Bool {
        state.withLock { state in
            guard state.heldLeases[lease.name]?.token == lease.token else { return false }
            state.heldLeases[lease.name] = nil
            return true
        }
    }

    private func countLeaseTurn(_ counter: WritableKeyPath<RedisLeaseTurns, Int>) {
        state.withLock { $0.leaseTurns[keyPath: counter] += 1 }
    }

    /// How this instance's load turns ended, since it was created.
    package var leaseTurns: RedisLeaseTurns { state.withLock { $0.leaseTurns } }
}

/// How an instance's load turns ended (``RedisCache/loadTurn(forKey:)``).
package struct RedisLeaseTurns: Sendable, Hashable {
    /// Turns that took the lease and loaded.
    package var held = 0
    /// Turns that found the lease held elsewhere and waited (counted once per wait).
    package var waited = 0
    /// Turns that served another process's stored value.
    package var landed = 0
    /// Turns that loaded without a lease: leases off, Redis failing, or the wait past its limit.
    package var unleased = 0
    /// Fail-safe callers that found the lease held and served their stale value instead of waiting
    /// (``RedisCache/isLoadLeased(forKey:)``).
    package var servedStale = 0
    /// Leases the load's fenced store gave up in its own script, with no round trip of their own.
    package var releasedInStore = 0
    /// Tickets whose removal counter the lease's own script had read, with no round trip of their own.
    package var ticketsFromLease = 0
}

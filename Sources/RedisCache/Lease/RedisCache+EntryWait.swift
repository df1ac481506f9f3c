import CacheCore
import RedisConnection

/// What made a waiter look at the server again.
package enum RedisWake: Sendable, Hashable {
    /// The wait's first look.
    case start
    /// A tracking push naming the key (a write or removal of it anywhere).
    case push
    /// A tracking "everything" (tracking just turned on or was lost, a clear, `FLUSHDB`).
    case everything
    /// The poll interval passed without a push (tracking off, or a push lost).
    case poll
}

/// How many looks each cause brought about, since the instance was created.
package struct RedisWakeCounts: Sendable, Hashable {
    package var start = 0
    package var push = 0
    package var everything = 0
    package var poll = 0
    /// Looks that found neither the entry nor a free lease (the waiter went on waiting).
    package var unfinished = 0
}

/// How ``RedisCache/waitForEntry(forKey:until:pollInterval:)`` ended.
package enum RedisEntryWait<Value: Sendable>: Sendable {
    /// The entry landed; `wokenBy` says what made the waiter look.
    case entry(CacheEntry<Value>, wokenBy: RedisWake)
    /// Neither entry nor lease: the holder gave up or died (its lease expired). The caller may take it.
    case leaseFree
    /// The deadline passed with the lease still held and no entry.
    case timedOut
}

extension RedisCache {
    /// Waits for another holder's load of `key` to land: returns the entry once it is on the server, or when
    /// the key's lease is free with no entry, or at `deadline`.
    ///
    /// Each look reads the lease, then the entry (in that order: a holder stores before it releases, so a
    /// free lease and a missing entry mean the holder ended without storing). Looks happen at once, on every
    /// tracking push naming the key (the wait registers an invalidation observer for its duration, which
    /// starts the tracking connection when nothing else holds it), and every `pollInterval` as a fallback
    /// for a lost push or ``RedisCacheConfiguration/tracksInvalidations`` off. Counted in ``leaseWakes``.
    ///
    /// - Parameters:
    ///   - key: The key another holder is loading.
    ///   - deadline: When to give up, on the monotonic clock.
    ///   - pollInterval: The longest time between looks without a push (default 100 ms).
    /// - Returns: `.entry`, `.leaseFree` or `.timedOut`.
    /// - Throws: What ``entry(forKey:)`` throws; `CancellationError` when the task is cancelled.
    /// - Complexity: Two round trips per look.
    package func waitForEntry(
        forKey key: Key, until deadline: ContinuousClock.Instant, pollInterval: Duration = .milliseconds(100)
    ) async throws -> RedisEntryWait<Value> {
        let name = try entryName(try Self.canonicalBytes(of: key))
        let (signals, signal) = AsyncStream.makeStream(of: WaitSignal.self)
        // Registered before the first look: a store after it is pushed, one before it is read by the look.
        let subscription = addInvalidationObserver { invalidation in
            switch invalidation {
            case .keys(let keys) where keys.contains(key): signal.yield(.wake(.push))
            case .all: signal.yield(.wake(.everything))
            default: break
            }
        }
        let poller = Task {
            while (try? await Task.sleep(for: pollInterval)) != nil { signal.yield(.wake(.poll)) }
        }
        let timer = Task {
            if (try? await Task.sleep(until: deadline, clock: .continuous)) != nil { signal.yield(.deadline) }
        }
        defer {
            subscription.cancel()
            poller.cancel()
            timer.cancel()
            signal.finish()
        }
        var wake = RedisWake.start
        var pending = signals.makeAsyncIterator()
        while true {
            countWake(wake)
            let held = try await isLeaseHeld(onEntry: name)
            if let entry = try await readEntry(forKey: key, includingStale: false) {
                return .entry(entry, wokenBy: wake)
            }
            guard held else { return .leaseFree }
            state.withLock { $0.wakes.unfinished += 1 }
            guard ContinuousClock.now < deadline else { return .timedOut }
            switch await pending.next() {
            case .wake(let next): wake = next
            case .deadline: return .timedOut
            case nil:
                try Task.checkCancellation()
                return .timedOut
            }
        }
    }

    /// How many looks of ``waitForEntry(forKey:until:pollInterval:)`` each cause brought about.
    package var leaseWakes: RedisWakeCounts { state.withLock { $0.wakes } }

    private func countWake(_ wake: RedisWake) {
        state.withLock { state in
            switch wake {
            case .start: state.wakes.start += 1
            case .push: state.wakes.push += 1
            case .everything: state.wakes.everything += 1
            case .poll: state.wakes.poll += 1
            }
        }
    }
}

/// What the waiter's stream carries: a cause to look again, or the deadline.
enum WaitSignal: Sendable {
    case wake(RedisWake)
    case deadline
}

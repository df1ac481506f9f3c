import CacheCore
import RedisConnection
import SealedRecord

/// A lease on loading one key, held by this process: `strata:v2:<namespace>:l:{<MAC>}` set to a random token
/// for a bounded time (Docs/RedisCache.md, "Load fencing and leases").
///
/// Thread safety: a plain value; `Sendable`.
package struct RedisLease: Sendable, Hashable {
    /// The lease's Redis key, in the slot of the entry it guards.
    let name: [UInt8]
    /// 128 random bits (the system's generator) in base64url: tells this holder's lease from a later holder's.
    let token: [UInt8]
    /// When the lease ends at the latest, on the monotonic clock: taken before the `SET` was sent, so the
    /// server's expiry is never earlier.
    package let expiresAt: ContinuousClock.Instant
}

/// What ``RedisCache/acquireLease(forKey:duration:)`` found.
package enum RedisLeaseAcquisition: Sendable, Hashable {
    /// This process holds the lease: it loads, stores, then releases.
    case acquired(RedisLease)
    /// Another holder has it: wait for the entry (``RedisCache/waitForEntry(forKey:until:pollInterval:)``).
    case heldElsewhere
    /// Asked with `unlessEntryExists`: the key's entry is on the server (perhaps only stale), so no lease was
    /// taken; read it, and ask again without the check if it is not live.
    case entryExists
}

extension RedisCache {
    /// Takes the lease on loading `key` for `duration`, unless another holder has it: `SET … NX PX` in the
    /// key's slot. A lease is efficiency, not correctness: a holder paused past its lease may still finish,
    /// and ``setEntry(_:forKey:ticket:)`` is what keeps a late write from storing a stale value.
    ///
    /// - Parameters:
    ///   - key: The key about to be loaded.
    ///   - duration: How long the lease lasts if never released: longer than a load takes, short enough that
    ///     waiters do not wait long on a holder that died. Rounded up to whole milliseconds.
    ///   - unlessEntryExists: Whether to take no lease while the key's entry exists, checked in the same
    ///     script: a process whose read missed just before another's load stored (and gave its lease up) then
    ///     serves that value instead of loading again.
    /// - Returns: `.acquired` with the lease, `.heldElsewhere`, or `.entryExists`.
    /// - Throws: `CacheError` `.invalidArgument` for a duration that is not positive; `.wrongMasterKey`; `.io`;
    ///   `CancellationError`.
    /// - Complexity: One round trip.
    package func acquireLease(
        forKey key: Key, duration: Duration, unlessEntryExists: Bool = false
    ) async throws -> RedisLeaseAcquisition {
        guard duration > .zero else { throw CacheError(.invalidArgument, "a lease lasts a positive duration") }
        try await verifyMasterKey()
        let entry = try entryName(try Self.canonicalBytes(of: key))
        let name = keys.sibling(ofEntry: entry, "l")
        let token = NamespaceKeys.base64URL((0..<16).map { _ in UInt8.random(in: .min ... .max) })
        let milliseconds = Array(String(max(1, Int64((duration / .milliseconds(1)).rounded(.up)))).utf8)
        let expiresAt = ContinuousClock.now + duration
        guard unlessEntryExists else {
            let reply = try await send(
                RESPCommand(arguments: [
                    Array("SET".utf8), name, token, Array("NX".utf8), Array("PX".utf8), milliseconds,
                ]), key: name)
            switch reply {
            case .simpleString: return .acquired(RedisLease(name: name, token: token, expiresAt: expiresAt))
            case .null: return .heldElsewhere
            default: throw CacheError(.io, "the Redis server answered the lease's SET with \(reply)")
            }
        }
        let counter = keys.sibling(ofEntry: entry, "r")
        let reply = try await send(
            RESPCommand(arguments: [
                Array("EVAL".utf8), LoadFenceScripts.acquireWithTicket, Array("3".utf8), name, entry, counter, token,
                milliseconds, Array(String(FenceCounter.freshBase()).utf8), Self.removalCounterMilliseconds,
            ]), key: name)
        guard case .array(let fields) = reply, fields.count == 2, case .integer(let outcome) = fields[0],
            let keyVersion = try Self.counterValue(fields[1])
        else {
            throw CacheError(.io, "the Redis server answered the lease's script with \(reply)")
        }
        switch outcome {
        case 1:
            // The load's ticket, taken next, reads this instead of asking again (`removalCounter(ofEntry:)`).
            prefetchCounter(keyVersion, named: counter)
            return .acquired(RedisLease(name: name, token: token, expiresAt: expiresAt))
        case 0: return .heldElsewhere
        case 2: return .entryExists
        default: throw CacheError(.io, "the Redis server answered the lease's script with \(reply)")
        }
    }

    /// Gives `lease` up, so the next waiter need not wait for its expiry: deleted only while it still holds
    /// this lease's token (a script), never a later holder's.
    ///
    /// - Parameter lease: A lease this tier returned.
    /// - Returns: Whether the lease was still held and is now released; `false` when it had expired.
    /// - Throws: `CacheError` `.io`; `CancellationError`.
    /// - Complexity: One round trip.
    @discardableResult
    package func releaseLease(_ lease: RedisLease) async throws -> Bool {
        let reply = try await send(
            RESPCommand(arguments: [
                Array("EVAL".utf8), LoadFenceScripts.release, Array("1".utf8), lease.name, lease.token,
            ]), key: lease.name)
        guard case .integer(let deleted) = reply else {
            throw CacheError(.io, "the Redis server answered the lease's release with \(reply)")
        }
        return deleted == 1
    }

    /// How long the lease on loading `key` has left, or `nil` when no process holds it.
    ///
    /// - Throws: `CacheError` `.io` when Redis fails or the lease has no expiry (no lease this tier took);
    ///   `CancellationError`.
    /// - Complexity: One round trip.
    func leaseRemaining(forKey key: Key) async throws -> Duration? {
        let lease = keys.sibling(ofEntry: try entryName(try Self.canonicalBytes(of: key)), "l")
        let reply = try await send(RESPCommand(arguments: [Array("PTTL".utf8), lease]), key: lease)
        switch reply {
        case .integer(-2): return nil
        case .integer(let milliseconds) where milliseconds >= 0: return .milliseconds(milliseconds)
        default: throw CacheError(.io, "the Redis server answered the lease's PTTL with \(reply)")
        }
    }

    /// Whether the lease on the entry `name` is held by anyone now.
    func isLeaseHeld(onEntry name: [UInt8]) async throws -> Bool {
        let lease = keys.sibling(ofEntry: name, "l")
        let reply = try await send(RESPCommand(arguments: [Array("EXISTS".utf8), lease]), key: lease)
        guard case .integer(let count) = reply else {
            throw CacheError(.io, "the Redis server answered EXISTS with \(reply)")
        }
        return count > 0
    }
}

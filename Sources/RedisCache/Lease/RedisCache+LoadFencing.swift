import CacheCore
import RedisConnection
import SealedRecord

// The load fence (Docs/RedisCache.md, "Load fencing and leases"): each entry has a removal counter beside it,
// `strata:v2:<namespace>:r:{<MAC>}`, in its slot. `removeEntry` advances it in the script that removes the
// entry; a load's ticket reads it; the loaded entry is stored by a script that compares it first. A clear and a
// tag removal need no check on the server: the entry is sealed under the ticket's epoch and stamped with its
// tag versions, so either makes it dead on arrival.
extension RedisCache: LoadFencingCache {
    /// How long a removal counter lives after its last advance or ticket, and the age past which a ticket no
    /// longer stores: 6 hours.
    ///
    /// Counters expire so that removals do not leave a key per removed entry behind for good. A ticket
    /// refreshes its counter's time to live, and a store more than this long after its ticket is refused, so
    /// an accepted store always finds the counter the ticket read or a later one, never one that expired and
    /// was created again at a fresh base (which would match only by the chance of two random bases meeting).
    /// A counter lost sooner (evicted under `allkeys-lru`, deleted) matches nothing: the store is refused.
    package static var removalCounterTimeToLive: Duration { .seconds(6 * 3600) }

    /// Reads the fences of `key` and `tags` before a load: the key's removal counter (created at a fresh
    /// random base when missing, and given its 6 hours to live again), the epoch writes are sealed
    /// with, and the tags' versions (as ``tagVersions(for:)`` reads them).
    ///
    /// - Parameters:
    ///   - key: The key about to be loaded.
    ///   - tags: The tags the loaded entry will carry.
    /// - Returns: The ticket for ``setEntry(_:forKey:ticket:)``, with the instant it was taken.
    /// - Throws: `CacheError` `.invalidArgument` for a tag over 65,535 bytes of UTF-8 or more than 65,535 tags
    ///   (nothing is sent); `.wrongMasterKey`; `.io`; `CancellationError`.
    /// - Complexity: One round trip: the counter's `EVAL` in the key's slot, with the tags' `MGET` (the
    ///   namespace's slot) sent concurrently; one more when the cached epoch is old or a tag's key is missing.
    public func loadTicket(forKey key: Key, tags: Set<String>) async throws -> CacheLoadTicket {
        try TagBlock.validate(tags)
        try await verifyMasterKey()
        let startedAt = ContinuousClock.now
        let name = try entryName(try Self.canonicalBytes(of: key))
        async let keyVersion = removalCounter(ofEntry: name)
        async let epoch = epochForWriting()
        let versions = tags.isEmpty ? [:] : try await stampingTagVersions(of: tags)
        return CacheLoadTicket(
            keyVersion: try await keyVersion, epoch: try await epoch, tagVersions: CacheTagVersions(versions),
            startedAt: startedAt)
    }

    /// Stores the loaded `entry` under `key` only if no removal of `key`, clear or removal of one of its tags
    /// happened since `ticket` was taken, in any process sharing the namespace.
    ///
    /// The key's removal counter is compared with the ticket's by the script that writes, so no removal can
    /// land in between. The entry is sealed under the ticket's epoch and stamped with its tag versions: a clear
    /// or tag removal since makes it a miss on every read. It is not written at all when this instance has seen
    /// a clear since the ticket, or the ticket is 6 hours old (the counter's lifetime).
    ///
    /// - Parameters:
    ///   - entry: The loaded entry, with its tags.
    ///   - key: The key.
    ///   - ticket: A ticket from ``loadTicket(forKey:tags:)`` for `key` on this namespace.
    /// - Returns: Whether the entry was stored.
    /// - Throws: What ``setEntry(_:forKey:)`` throws.
    /// - Complexity: One round trip (`EVAL`); one more for a tag the ticket lacks.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key, ticket: CacheLoadTicket) async throws -> Bool {
        try TagBlock.validate(entry.tags)
        try await verifyMasterKey()
        guard ContinuousClock.now - ticket.startedAt < Self.removalCounterTimeToLive,
            state.withLock({ $0.epoch }) <= ticket.epoch
        else { return false }
        let stamps = try await stamps(for: entry, from: ticket.tagVersions)
        return try await write(entry, forKey: key, tagVersions: stamps, fence: ticket)
    }

    /// The removal counter of the entry `name`, created when missing, with its time to live renewed; the value
    /// a lease just read for this process's load when there is one (``prefetchCounter(_:named:)``).
    func removalCounter(ofEntry name: [UInt8]) async throws -> UInt64 {
        let counter = keys.sibling(ofEntry: name, "r")
        let prefetched: UInt64? = state.withLock { state in
            guard let value = state.prefetchedCounters.removeValue(forKey: counter) else { return nil }
            state.leaseTurns.ticketsFromLease += 1
            return value
        }
        if let prefetched { return prefetched }
        let reply = try await send(
            RESPCommand(arguments: [
                Array("EVAL".utf8), LoadFenceScripts.ticket, Array("1".utf8), counter,
                Array(String(FenceCounter.freshBase()).utf8), Self.removalCounterMilliseconds,
            ]), key: counter)
        guard let value = try Self.counterValue(reply) else {
            throw CacheError(.io, "the Redis server answered the removal counter's read with \(reply)")
        }
        return value
    }

    /// Removes the entry `name` and advances its removal counter in one script.
    // Not confirmed with `WAIT` as the namespace's counters are: a failover that loses this script loses the
    // `UNLINK` with it, so the removed value is back whatever the counter says — as it was with a plain
    // `UNLINK` — and a `WAIT` would put a replica's round trip (up to 100 ms) on every removal.
    func removeAndAdvance(_ name: [UInt8]) async throws {
        let counter = keys.sibling(ofEntry: name, "r")
        _ = try await send(
            RESPCommand(arguments: [
                Array("EVAL".utf8), LoadFenceScripts.remove, Array("2".utf8), name, counter,
                Array(String(FenceCounter.freshBase()).utf8), Self.removalCounterMilliseconds,
            ]), key: counter)
    }

    /// Writes `sealed` under `name` for `milliseconds` while the removal counter holds `keyVersion`; gives up
    /// this instance's lease on loading the entry in the same script when a load turn holds one
    /// (``RedisCache/loadTurn(forKey:)``), so the load's release costs no round trip.
    // A direct `setEntry(_:forKey:ticket:)` of a key this instance is loading under a lease gives that lease up
    // early too: another process may then load the key as well, which the lease only ever makes rarer.
    func storeFenced(_ sealed: [UInt8], name: [UInt8], milliseconds: Int64, keyVersion: UInt64) async throws -> Bool {
        let leaseName = keys.sibling(ofEntry: name, "l")
        let lease = state.withLock { $0.heldLeases[leaseName] }
        var arguments = [
            Array("EVAL".utf8), lease == nil ? LoadFenceScripts.fencedStore : LoadFenceScripts.fencedStoreReleasing,
            Array((lease == nil ? "2" : "3").utf8), name, keys.sibling(ofEntry: name, "r"),
        ]
        if lease != nil { arguments.append(leaseName) }
        arguments += [Array(String(keyVersion).utf8), sealed, Array(String(milliseconds).utf8)]
        if let lease { arguments.append(lease.token) }
        let reply = try await send(RESPCommand(arguments: arguments), key: name)
        guard case .integer(let stored) = reply else {
            throw CacheError(.io, "the Redis server answered the fenced store with \(reply)")
        }
        // Only once the script ran: a store that failed leaves the lease to the load's release.
        if let lease, forgetHeldLease(lease) { state.withLock { $0.leaseTurns.releasedInStore += 1 } }
        return stored == 1
    }

    /// Keeps `value`, the removal counter `name` as the lease's script read it, for the ticket of the load
    /// that took the lease. A value read earlier than the ticket would be is safe: a removal since advances the
    /// counter, and the store is refused. Kept for one ticket; at most 1,024 are kept (a lease whose load never
    /// took its ticket leaves one behind).
    func prefetchCounter(_ value: UInt64, named name: [UInt8]) {
        state.withLock { state in
            if state.prefetchedCounters.count >= 1_024 { state.prefetchedCounters.removeAll() }
            state.prefetchedCounters[name] = value
        }
    }

    /// ``removalCounterTimeToLive`` in milliseconds, as the scripts take it.
    static var removalCounterMilliseconds: [UInt8] {
        Array(String(removalCounterTimeToLive.components.seconds * 1000).utf8)
    }
}

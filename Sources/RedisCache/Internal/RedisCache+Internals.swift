import CacheCore
import CacheCrypto
import RedisConnection
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The steps the public operations share: naming, sending with typed errors, the epoch, the key check and
// opening an envelope.
extension RedisCache {
    /// A key's canonical bytes; a key that cannot be encoded is `invalidArgument`.
    static func canonicalBytes(of key: Key) throws -> Data {
        do {
            return try key.canonicalBytes
        } catch {
            throw CacheError(.invalidArgument, "cannot encode the key: \(error)", cause: error)
        }
    }

    /// The Redis key for a key's canonical bytes.
    func entryName(_ keyBytes: Data) throws -> [UInt8] {
        do {
            return try keys.entryKey(for: keyBytes)
        } catch {
            throw CacheError(.crypto, "cannot name the key: \(error)", cause: error)
        }
    }

    /// The first standalone connection of the pool (the only one by default).
    var connection: RedisConnection { route.pool.primary }

    /// Sends `command` (on a cluster, to the primary of `key`'s slot), turning transport failures into
    /// `CacheError`s that name the server, with the public `RedisError` (the connection layer's code and
    /// message) as their cause.
    func send(_ command: RESPCommand, key: [UInt8]) async throws -> RESPValue {
        do {
            return try await route.send(command, key: key)
        } catch let failure as ConnectionError {
            throw cacheError(failure)
        }
    }

    /// The values of `names` in their order (`GET` of each, `.null` for a missing one): one `MGET` on a
    /// standalone server, one run per primary on a cluster (ServerRoute.values(of:)).
    func values(of names: [[UInt8]]) async throws -> [RESPValue] {
        do {
            return try await route.values(of: names)
        } catch let failure as ConnectionError {
            throw cacheError(failure)
        }
    }

    /// The `CacheError` for a transport failure: a code an app holding `any Cache` can act on, the server's
    /// address, and the public `RedisError` as its cause.
    func cacheError(_ failure: ConnectionError) -> CacheError {
        let error = RedisError(failure)
        // Codes an app holding `any Cache` may need to tell apart live in CacheError (Overview.md, "Where
        // a code lives"); the transport's own detail stays in the `RedisError` cause.
        let code: CacheError.Code =
            switch error.code {
            case .outOfMemory: .outOfSpace
            case .authenticationFailed: .permissionDenied
            case .deadlineExceeded: .deadlineExceeded
            case .unavailable, .connectFailed, .connectionClosed, .loading: .unavailable
            case .clusterMode, .replica, .readOnly, .moved, .ask, .crossSlot: .unsupportedServer
            default: .io
            }
        // The server's address once: a connect failure already names it, and on a cluster the failing node's
        // connection failure names that node (the configured address may be another, healthy node).
        let address = "\(configuration.host):\(configuration.port)"
        let namesItsNode = route.cluster != nil && error.message.hasPrefix("node ")
        let namesItsServer = error.message.contains(address) || namesItsNode
        let place = namesItsServer ? "Redis" : "Redis at \(address)"
        return CacheError(code, "\(place): \(error)", cause: error)
    }

    /// Milliseconds for `PX`: the time left before `expiresAt` rounded up (so the server never drops an
    /// entry the envelope still calls live), capped by the maximum TTL; `nil` when already expired.
    func timeToLive(for expiresAt: Date?) -> Int64? {
        let cap = configuration.maximumTimeToLive.timeInterval * 1000
        let padding = configuration.serverTimeToLivePadding.timeInterval * 1000
        guard let expiresAt else { return Int64((cap + padding).rounded(.up)) }
        let remaining = expiresAt.timeIntervalSince(clock.now) * 1000
        guard remaining > 0 else { return nil }
        return Int64((min(remaining, cap) + padding).rounded(.up))
    }

    /// Records an epoch read from the server and returns the effective one: never lower than one seen
    /// before, so a counter lost to eviction cannot bring entries of a cleared epoch back.
    func noteEpoch(_ epoch: UInt64) -> UInt64 {
        let now = ContinuousClock.now
        return state.withLock { state in
            state.epoch = max(state.epoch, epoch)
            state.epochReadAt = now
            return state.epoch
        }
    }

    /// The epoch to compare entries with, given the counter a reply carried; `nil` while the counter is
    /// missing (lost, or not created yet): then no entry is of the current epoch (the counter rule, FenceCounter).
    ///
    /// A counter below one this instance saw means it was lost (`FLUSHDB`, evicted under `allkeys-lru`, or
    /// lost in a failover). A fresh read confirms it first: a reply overtaken by a later `removeAll()`'s `INCR`
    /// also reads lower, and is not a loss. A confirmed loss is repaired by raising the counter above
    /// every epoch seen (a script that only ever raises it, so concurrent repairs never lower it): entries sealed
    /// before the loss stay unreadable, and a later `removeAll()` advances past what this instance seals
    /// with. Taking the higher of the two without repairing would keep sealing under an epoch the server
    /// no longer counts, so a `removeAll()` after the loss would not clear this instance's writes.
    func effectiveEpoch(_ reported: UInt64?) async throws -> UInt64? {
        guard let reported else {
            // The cached epoch is no longer the server's: the next write reads again, and creates the counter.
            state.withLock { $0.epochReadAt = nil }
            return nil
        }
        // The common case, a counter at or above the one seen, is recorded under the same single lock.
        let now = ContinuousClock.now
        let accepted = state.withLock { state -> UInt64? in
            guard reported >= state.epoch else { return nil }
            state.epoch = reported
            state.epochReadAt = now
            return reported
        }
        if let accepted { return accepted }
        let reply = try await send(RESPCommand(arguments: [Array("GET".utf8), keys.epochKey]), key: keys.epochKey)
        guard let fresh = try Self.counterValue(reply) else {
            state.withLock { $0.epochReadAt = nil }
            return nil
        }
        return try await repairEpoch(fresh, above: state.withLock { $0.epoch })
    }

    /// Returns `counter` when it exceeds `highest` - 1 (it is at least `highest`), else raises the server's
    /// counter past `highest` by a random step of up to 2^32 (unless it is already higher) and returns its value.
    // The random step: other clients may have advanced the counter past `highest` before it went back, and
    // entries of those epochs were cleared; landing exactly on `highest + 1` would bring them back.
    // Raising to a target, not adding the gap: a counter recreated at a fresh base can sit up to 2^61 below,
    // and every task and process that reads it repairs at once — added up (`INCRBY`), a few such repairs
    // overflowed the server's 64-bit counter ("increment or decrement would overflow"), seen after a failover.
    func repairEpoch(_ counter: UInt64, above highest: UInt64, strictly: Bool = false) async throws -> UInt64 {
        if strictly ? counter > highest : counter >= highest { return noteEpoch(counter) }
        let target = Array(String(highest + 1 + UInt64.random(in: 0..<(1 << 32))).utf8)
        let raise = RESPCommand(arguments: [
            Array("EVAL".utf8), CounterScripts.raise, Array("1".utf8), keys.epochKey, target,
        ])
        let reply = try await send(raise, key: keys.epochKey)
        guard let value = try Self.counterValue(reply) else {
            throw CacheError(.io, "the Redis server answered the epoch's repair with \(reply)")
        }
        return noteEpoch(value)
    }

    /// The epoch to seal a write with: the cached one while fresh, else read again; a missing counter is
    /// created at a fresh base first (the counter rule: a stamp is taken only from a counter that exists).
    func epochForWriting() async throws -> UInt64 {
        let interval = configuration.epochRefreshInterval
        let cached = state.withLock { state -> UInt64? in
            guard let readAt = state.epochReadAt, ContinuousClock.now - readAt < interval else { return nil }
            return state.epoch
        }
        if let cached { return cached }
        let reply = try await send(RESPCommand(arguments: [Array("GET".utf8), keys.epochKey]), key: keys.epochKey)
        for read in [try Self.counterValue(reply)] + [nil, nil] {
            let counter: UInt64
            if let read { counter = read } else { counter = try await createCounters([keys.epochKey])[0] }
            // `nil` only when the counter went missing again between the reads.
            if let epoch = try await effectiveEpoch(counter) { return epoch }
        }
        throw CacheError(.io, "the namespace's epoch counter keeps disappearing; is another client deleting it?")
    }

    /// Checks once per instance that the namespace's key-check record belongs to this master key, and
    /// writes the record when the namespace has none.
    ///
    /// - Throws: `CacheError` `.wrongMasterKey` when another master key sealed the namespace.
    func verifyMasterKey() async throws {
        if state.withLock({ $0.masterKeyVerified }) { return }
        for _ in 0..<3 {
            let reply = try await send(RESPCommand(arguments: [Array("GET".utf8), keys.checkKey]), key: keys.checkKey)
            switch reply {
            case .null:
                let record = try checkRecord()
                let set = try await send(
                    RESPCommand(arguments: [Array("SET".utf8), keys.checkKey, record, Array("NX".utf8)]),
                    key: keys.checkKey)
                // `nil` means another process wrote one first: read and judge it.
                if set == .null { continue }
            case .bulkString(let bytes):
                switch try checkOutcome(bytes) {
                case .matches:
                    break
                case .otherMasterKey:
                    throw Self.wrongMasterKeyError(namespace: keys.namespace)
                case .damaged:
                    // A record with this master key's fingerprint, or whose seal opens under this key (its
                    // fingerprint damaged), or without the record's magic gets here; another key's record
                    // never does, so rewriting it takes nothing from another holder.
                    _ = try await send(
                        RESPCommand(arguments: [Array("SET".utf8), keys.checkKey, try checkRecord()]),
                        key: keys.checkKey)
                    report(.corruptEntryKept, "the namespace's key-check record was damaged and was rewritten")
                }
            default:
                throw CacheError(.io, "unexpected reply for the key-check record: \(reply)")
            }
            state.withLock { $0.masterKeyVerified = true }
            return
        }
        throw CacheError(.io, "the namespace's key-check record keeps changing; is another process deleting it?")
    }

    static func wrongMasterKeyError(namespace: String) -> CacheError {
        CacheError(
            .wrongMasterKey,
            "the namespace \"\(namespace)\" was sealed with a different master key; nothing was read or deleted")
    }

    private func checkRecord() throws -> [UInt8] {
        do { return try keys.makeCheckRecord() } catch {
            throw CacheError(.crypto, "cannot seal the key-check record: \(error)", cause: error)
        }
    }

    private func checkOutcome(_ bytes: [UInt8]) throws -> NamespaceKeys.CheckOutcome {
        do { return try keys.evaluate(checkRecord: bytes) } catch {
            throw CacheError(.crypto, "cannot check the master key: \(error)", cause: error)
        }
    }

    /// Opens a stored envelope; every way it can fail to be this key's live value is a miss. A `nil`
    /// `currentEpoch` (the counter is missing) makes every envelope one of another epoch.
    ///
    /// With `includingStale`, an expired entry still before its stale-until instant is returned (counted as
    /// nothing); without it, such an entry is a miss that is left in place.
    func open(
        _ bytes: [UInt8], keyBytes: Data, name: [UInt8], currentEpoch: UInt64?, includingStale: Bool = false
    ) async throws -> CacheEntry<Value>? {
        var plaintext: Data
        let header: Envelope.Header
        do {
            header = try Envelope.header(of: bytes)
            // The kernel's liveness rule on the header alone first: an envelope of another epoch is a miss
            // without being decrypted (nor its tags' versions fetched).
            let early = header.stamp().liveness(currentEpoch: currentEpoch, currentTagVersions: [:], at: clock.now)
            guard early != .wrongEpoch else {
                state.withLock { $0.staleEpochEntries += 1 }
                return countMiss()
            }
            plaintext = try Envelope.open(
                bytes, keyBytes: keyBytes, namespace: keys.namespace, redisKey: name, subkey: keys.sealing)
        } catch let failure as Envelope.Failure {
            try await confirmMasterKey()
            state.withLock { $0.corruptEntries += 1 }
            report(
                .corruptEntryKept,
                "an entry of namespace \"\(keys.namespace)\" did not open (\(failure)); read as a miss")
            return countMiss()
        } catch {
            throw CacheError(.crypto, "cannot open the entry: \(error)", cause: error)
        }
        var stamped: [String: UInt64] = [:]
        var current: [String: UInt64] = [:]
        if header.hasTags {
            guard let (versions, value) = TagBlock.decode(plaintext) else {
                state.withLock { $0.corruptEntries += 1 }
                return countMiss()
            }
            (stamped, plaintext) = (versions, value)
            current = try await currentTagVersions(of: Set(stamped.keys))
        }
        // The kernel's one liveness rule (Sources/SealedRecord), shared with the disk tier; the clock is read
        // after the tags' versions arrived.
        let isStale: Bool
        switch header.stamp(tagVersions: stamped).liveness(
            currentEpoch: currentEpoch, currentTagVersions: current, at: clock.now)
        {
        case .live:
            isStale = false
        case .servableStale:
            // Kept for loads that may serve it stale (the server's TTL runs to its stale-until instant).
            guard includingStale else { return countMiss() }
            isStale = true
        case .fencedByTag:
            // A removed tag ends the entry for every read, stale ones included. Left in place: the server's
            // TTL or eviction takes it, and an `UNLINK` here could remove a fresh entry written meanwhile.
            return countMiss()
        case .wrongEpoch:
            state.withLock { $0.staleEpochEntries += 1 }
            return countMiss()
        case .expired:
            // Expired on this tier's clock (the server's TTL may still run, on its own clock): removed, so
            // that a clock set back cannot bring it back. It opened, so it is this namespace's own entry.
            _ = try await send(RESPCommand(arguments: [Array("UNLINK".utf8), name]), key: name)
            state.withLock {
                $0.statistics.expirations += 1
                $0.statistics.misses += 1
            }
            return nil
        }
        let value: Value
        do {
            value = try codec.decode(plaintext)
        } catch {
            throw CacheError(.codec, "cannot decode the value: \(error)", cause: error)
        }
        if !isStale { state.withLock { $0.statistics.hits += 1 } }
        return CacheEntry(
            value: value, expiresAt: header.expiresAt, cost: header.cost, staleUntil: header.staleUntil,
            tags: Set(stamped.keys))
    }

    /// After an entry failed to open: throws `wrongMasterKey` when the namespace's key-check record now
    /// belongs to another master key (it was replaced since this instance checked it), so that a key
    /// change is never mistaken for corruption.
    private func confirmMasterKey() async throws {
        let reply = try await send(RESPCommand(arguments: [Array("GET".utf8), keys.checkKey]), key: keys.checkKey)
        if case .bulkString(let bytes) = reply, try checkOutcome(bytes) == .otherMasterKey {
            state.withLock { $0.masterKeyVerified = false }
            throw Self.wrongMasterKeyError(namespace: keys.namespace)
        }
    }

    func countMiss() -> CacheEntry<Value>? {
        state.withLock { $0.statistics.misses += 1 }
        return nil
    }

    func report(_ kind: CacheEvent.Kind, _ message: String) {
        configuration.observer?(CacheEvent(kind, message))
    }
}

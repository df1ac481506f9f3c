import CacheCore
import RedisConnection
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The fencing counters on the server — the namespace's epoch and the tags' version keys — kept by the
// sealed-record kernel's counter rule (FenceCounter, Docs/RedisCache.md "Counters"): a missing key matches no
// stamp; a writer that needs one creates it at a fresh random base; advancing a missing one creates it. So a key
// lost to `allkeys-lru` or a `DEL` never counts through values that entries were sealed or stamped with.
extension RedisCache {
    /// A counter's value in a reply: `nil` when the key is missing (it matches no stamp).
    ///
    /// - Throws: `CacheError` `.corruptEntry` when the key holds something other than a number; `.io` for a
    ///   reply of another type.
    static func counterValue(_ reply: RESPValue) throws -> UInt64? {
        switch reply {
        case .null:
            return nil
        case .bulkString(let bytes):
            guard let value = decimal(bytes) else {
                throw CacheError(
                    .corruptEntry, "a fencing counter of the namespace holds something other than a number")
            }
            return value
        case .integer(let value) where value >= 0:
            return UInt64(value)
        default:
            throw CacheError(.io, "unexpected reply for a fencing counter: \(reply)")
        }
    }

    /// The unsigned decimal number `bytes` spell (Redis's reply for a counter), or `nil` for anything else or
    /// a value past `UInt64.max`. Every read parses the epoch: this avoids building a `String` per read.
    static func decimal(_ bytes: [UInt8]) -> UInt64? {
        guard !bytes.isEmpty, bytes.count <= 20 else { return nil }
        var value: UInt64 = 0
        for byte in bytes {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times10, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
        }
        return value
    }

    /// Advances the counter `key` (one more, or a fresh base when it is missing) and returns its new value.
    ///
    /// - Complexity: One round trip (`EVAL`).
    func advanceCounter(_ key: [UInt8]) async throws -> UInt64 {
        let base = Array(String(FenceCounter.freshBase()).utf8)
        let advance = RESPCommand(arguments: [Array("EVAL".utf8), CounterScripts.advance, Array("1".utf8), key, base])
        let reply: RESPValue
        if let timeout = configuration.fenceConfirmationTimeout {
            reply = try await advanceConfirmed(advance, key: key, timeout: timeout)
        } else {
            reply = try await send(advance, key: key)
        }
        guard let value = try Self.counterValue(reply) else {
            throw CacheError(.io, "the Redis server answered the counter's advance with \(reply)")
        }
        return value
    }

    /// Sends a counter's advance on one connection and, when the server has replicas, `WAIT 1` on that
    /// connection for at most `timeout`, counting the fence as confirmed or unconfirmed (Docs/RedisCache.md,
    /// "Fences that survive a failover"). Whether there are replicas is asked with `ROLE`, in the same run as
    /// the advance, at most once per ``replicaCheckInterval``.
    // Replication is asynchronous: a failover before a replica has the advance undoes it, and entries it
    // fenced would open again. `WAIT` counts the writes of its own connection, so the commands share one. A
    // server with no replica would hold `WAIT 1` for the whole timeout, hence `ROLE`; asking it with every
    // fence made the run go through the connection's I/O thread and tripled `removeAll()`'s latency
    // (0.03–0.06 ms → 0.12–0.18 ms, strata-bench redis-removeall), so its answer is kept a while.
    private func advanceConfirmed(_ advance: RESPCommand, key: [UInt8], timeout: Duration) async throws -> RESPValue {
        // `WAIT` holds the connection's reply that long: at the read deadline it would close it.
        let wait = min(timeout, configuration.readTimeout / 2)
        let milliseconds = Int((wait / .milliseconds(1)).rounded(.down))
        let waitCommand = RESPCommand("WAIT", "1", String(max(1, milliseconds)))
        do {
            return try await route.withConnection(forKey: key) { connection in
                let now = ContinuousClock.now
                let known = state.withLock { state in
                    state.replicas.flatMap { now - $0.askedAt < Self.replicaCheckInterval ? $0.count : nil }
                }
                // A replica count of -1: `ROLE` was refused (an ACL without `+role`), so nothing is known.
                if let known, known > 0, milliseconds >= 1 {
                    // The advance and its `WAIT` as one run: a reconnect between them would make `WAIT` count
                    // a fresh session's writes (none) and confirm at once.
                    let replies = try await connection.send(adjacent: [advance, waitCommand])
                    let reply = try replies[0].get()
                    noteConfirmation(try? replies[1].get())
                    return reply
                }
                if let known {
                    let reply = try await connection.send(advance)
                    if known != 0 { noteConfirmation(nil) }
                    return reply
                }
                let replies = try await connection.send(adjacent: [advance, RESPCommand("ROLE")])
                let reply = try replies[0].get()
                let replicas = (try? replies[1].get()).map(Self.replicaCount(role:)) ?? -1
                state.withLock { $0.replicas = (replicas, now) }
                guard replicas != 0 else { return reply }
                guard replicas > 0, milliseconds >= 1 else {
                    noteConfirmation(nil)
                    return reply
                }
                let connects = connection.statistics.connects
                let acknowledged = try? await connection.send(waitCommand)
                // A `WAIT` on a new session counts none of the advance's writes: not a confirmation.
                noteConfirmation(connection.statistics.connects == connects ? acknowledged : nil)
                return reply
            }
        } catch let failure as ConnectionError {
            guard route.cluster != nil, Self.wasNotRun(failure) else { throw cacheError(failure) }
            // On a cluster the run goes to the slot's primary without following redirects: the namespace's slot
            // moved (a resharding, a failover) since the map was read, and the script did not run. Sent again
            // through the cluster layer, which follows the redirect; this fence is not confirmed.
            let reply = try await send(advance, key: key)
            noteConfirmation(nil)
            return reply
        }
    }

    /// Whether a cluster answered `failure` without running the command: a redirect (`MOVED`, `ASK`) or a passing
    /// state (`TRYAGAIN`, `CLUSTERDOWN`, `LOADING`).
    static func wasNotRun(_ failure: ConnectionError) -> Bool {
        switch failure.code {
        case .moved, .ask, .loading: true
        case .serverError: failure.message.hasPrefix("TRYAGAIN") || failure.message.hasPrefix("CLUSTERDOWN")
        default: false
        }
    }

    /// Counts a fence as confirmed when `acknowledged` is a `WAIT` reply naming at least one replica, else
    /// as unconfirmed (no reply, a refused or failed `WAIT`, a refused `ROLE`, or no replica in time). The
    /// fence itself took effect either way.
    private func noteConfirmation(_ acknowledged: RESPValue?) {
        var confirmed = false
        if case .integer(let count)? = acknowledged { confirmed = count > 0 }
        state.withLock { state in
            if confirmed { state.confirmedFences += 1 } else { state.unconfirmedFences += 1 }
        }
    }

    /// How long the replica count from `ROLE` is trusted: a replica attached since is waited on from the
    /// next check on.
    static var replicaCheckInterval: Duration { .seconds(5) }

    /// The number of replicas a `ROLE` reply of a primary lists (`["master", offset, [[host, port, offset],
    /// …]]`); 0 for anything else.
    static func replicaCount(role: RESPValue) -> Int {
        guard case .array(let fields) = role, fields.count >= 3, fields[0].string == "master",
            case .array(let replicas) = fields[2]
        else { return 0 }
        return replicas.count
    }

    /// Creates each missing counter of `keys` at its own fresh base and returns every counter's value, in the
    /// order of `keys`.
    ///
    /// - Complexity: One round trip (`EVAL`) for any number of keys.
    func createCounters(_ keys: [[UInt8]]) async throws -> [UInt64] {
        let bases = keys.map { _ in Array(String(FenceCounter.freshBase()).utf8) }
        let reply = try await send(
            RESPCommand(
                arguments: [Array("EVAL".utf8), CounterScripts.create, Array(String(keys.count).utf8)] + keys + bases),
            // A namespace's counters share its slot (NamespaceKeys): one script on a cluster too.
            key: keys[0])
        guard case .array(let items) = reply, items.count == keys.count else {
            throw CacheError(.io, "the Redis server answered the counters' creation with \(reply)")
        }
        return try items.map { item in
            // Deleted again between the script's SET and GET is impossible (a script runs alone); a nil here
            // is a server that did not run the script as written.
            guard let value = try Self.counterValue(item) else {
                throw CacheError(.io, "the Redis server did not create a fencing counter: \(reply)")
            }
            return value
        }
    }
}

/// The Lua scripts that keep the counter rule atomic on the server. Outside the generic class: a generic type
/// cannot hold static stored properties.
enum CounterScripts {
    /// Sets the counter `KEYS[1]` to `ARGV[1]` unless it already holds at least that, in one atomic step;
    /// returns the counter as the server stores it. Compared as decimal strings (neither has leading zeros):
    /// Lua's doubles cannot tell apart counters near 2^62.
    static let raise = Array(
        """
        local current = redis.call('GET', KEYS[1])
        local target = ARGV[1]
        if current and (#current > #target or (#current == #target and current >= target)) then return current end
        redis.call('SET', KEYS[1], target)
        return target
        """.utf8)

    /// Adds one to the counter `KEYS[1]`, or creates it at the fresh base `ARGV[1]` when it is missing, in one
    /// atomic step; returns the counter as the server stores it. Read back with `GET`: Lua carries integers as
    /// doubles, which would round a value near 2^62.
    static let advance = Array(
        """
        if redis.call('SET', KEYS[1], ARGV[1], 'NX') then return ARGV[1] end
        redis.call('INCR', KEYS[1])
        return redis.call('GET', KEYS[1])
        """.utf8)

    /// Creates each missing counter `KEYS[i]` at the fresh base `ARGV[i]` and returns every counter's value,
    /// in one atomic step: a counter another client created or advanced first is kept as it is.
    static let create = Array(
        """
        local values = {}
        for i, key in ipairs(KEYS) do
          redis.call('SET', key, ARGV[i], 'NX')
          values[i] = redis.call('GET', key)
        end
        return values
        """.utf8)
}

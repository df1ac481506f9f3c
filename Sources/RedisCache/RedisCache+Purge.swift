import CacheCore
import RedisConnection

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Removing entries of older epochs: the optional clean-up after `removeAll()`. Reads never need it (an
// older epoch does not open); it only frees the server's memory before TTLs or eviction would.
extension RedisCache {
    /// Removes, in one full `SCAN` of the namespace, every entry sealed under an epoch older than the
    /// current one, and returns how many keys it removed.
    ///
    /// Steps of `SCAN <cursor> MATCH strata:v2:<namespace>:k:* COUNT 100`; for each name found, a
    /// `GETRANGE` of the envelope's first 10 bytes (format version, flags and epoch are plaintext, so no
    /// value is read or opened), then one `UNLINK` of those whose header is this format's and whose epoch
    /// is older than the one read at the start of the step. Never `KEYS` or `FLUSHDB`; values of another
    /// format and entries of the current epoch are left alone.
    ///
    /// An entry another process rewrites between its header read and the `UNLINK` may be removed with the
    /// old one: a later miss, never a wrong value. Keys added during the pass may or may not be visited
    /// (`SCAN`'s guarantee); call it again for those.
    ///
    /// - Returns: The number of keys removed.
    /// - Throws: `CacheError` `.wrongMasterKey` when another master key sealed the namespace (nothing is
    ///   removed); `.unavailable`, `.deadlineExceeded`, `.io` when the server fails; `CancellationError`.
    /// - Complexity: O(*n*) in the keys of the Redis database (SCAN visits all of them, `MATCH` filters on
    ///   the server): about *n* / 100 round trips plus one pipelined batch per step.
    ///
    /// Thread-safe; may run beside any other operation.
    public func purgeOldEpochs() async throws -> Int {
        var cursor = PurgeCursor()
        var removed = 0
        repeat {
            let step = try await purgeStep(cursor: cursor)
            removed += step.removed
            cursor = step.next
        } while cursor != PurgeCursor()
        return removed
    }

    /// One `SCAN` step of ``purgeOldEpochs()``: looks at about 100 keys from `cursor` on.
    ///
    /// - Parameter cursor: ``PurgeCursor/init()`` to start, else the cursor the previous step returned.
    /// - Returns: The cursor to continue from (``PurgeCursor/init()`` when the scan is complete) and the keys
    ///   removed.
    func purgeStep(cursor: PurgeCursor) async throws -> (next: PurgeCursor, removed: Int) {
        try await verifyMasterKey()
        // The epoch is read first: an entry sealed under it or a later one (a removeAll racing this step)
        // is never older than it, so only entries that no reader can open are removed.
        // A missing counter: every entry is of another epoch, but none is known to be older than the next
        // epoch, so nothing is judged until a write or removeAll() creates the counter again.
        guard
            let epoch = try await effectiveEpoch(
                try Self.counterValue(
                    try await send(RESPCommand(arguments: [Array("GET".utf8), keys.epochKey]), key: keys.epochKey)))
        else { return (PurgeCursor(), 0) }
        // On a cluster each primary is scanned in turn (SCAN sees one node's keys); a map that changed between
        // steps may skip or repeat a node's keys, within SCAN's own guarantee (call again for the rest).
        let nodes: [RedisConnection.Address?]
        do { nodes = try await route.scanNodes() } catch let failure as ConnectionError { throw cacheError(failure) }
        guard cursor.node < nodes.count else { return (PurgeCursor(), 0) }
        let scan = RESPCommand(arguments: [
            Array("SCAN".utf8), cursor.scan, Array("MATCH".utf8), Array((keys.prefix + "k:*").utf8),
            Array("COUNT".utf8), Array("100".utf8),
        ])
        let reply: RESPValue
        do {
            reply = try await route.send(scan, toNode: nodes[cursor.node])
        } catch let failure as ConnectionError {
            throw cacheError(failure)
        }
        guard case .array(let parts) = reply, parts.count == 2, case .bulkString(let scanned) = parts[0],
            case .array(let found) = parts[1]
        else {
            throw CacheError(.io, "the Redis server answered SCAN with \(reply)")
        }
        var next = PurgeCursor(node: cursor.node, scan: scanned)
        if scanned == Array("0".utf8) {
            next = cursor.node + 1 < nodes.count ? PurgeCursor(node: cursor.node + 1, scan: scanned) : PurgeCursor()
        }
        let names = found.compactMap { item -> [UInt8]? in
            guard case .bulkString(let name) = item, Self.isEntryName(name, prefix: keys.prefix) else { return nil }
            return name
        }
        let old = try await namesOlder(than: epoch, among: names)
        guard !old.isEmpty else { return (next, 0) }
        do {
            return (next, try await route.unlink(old))
        } catch let failure as ConnectionError {
            throw cacheError(failure)
        }
    }

    /// The names among `names` whose value is an envelope of this format sealed under an epoch below
    /// `epoch`; the header reads are sent together (pipelined).
    private func namesOlder(than epoch: UInt64, among names: [[UInt8]]) async throws -> [[UInt8]] {
        try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            for name in names {
                group.addTask {
                    let reply: RESPValue
                    do {
                        reply = try await self.send(
                            RESPCommand(arguments: [Array("GETRANGE".utf8), name, Array("0".utf8), Array("9".utf8)]),
                            key: name)
                    } catch let error as CacheError where error.code == .io {
                        return nil  // another type under the prefix (WRONGTYPE): not ours to judge
                    }
                    guard case .bulkString(let header) = reply, let sealed = Self.epoch(ofHeader: header),
                        sealed < epoch
                    else { return nil }
                    return name
                }
            }
            var old: [[UInt8]] = []
            for try await name in group { if let name { old.append(name) } }
            return old
        }
    }

    /// The epoch in an envelope's first 10 bytes (version, flags, big-endian epoch; `Envelope`), or `nil`
    /// when they are not this format's.
    static func epoch(ofHeader bytes: [UInt8]) -> UInt64? {
        guard bytes.count == 10, bytes[0] == Envelope.version, bytes[1] & ~0b111 == 0 else { return nil }
        return bytes[2..<10].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Whether `name` is `<prefix>k:{`, 22 base64url characters and `}`: an entry name this tier makes.
    static func isEntryName(_ name: [UInt8], prefix: String) -> Bool {
        let head = Array((prefix + "k:{").utf8)
        guard name.count == head.count + 23, name.starts(with: head), name.last == UInt8(ascii: "}") else {
            return false
        }
        return name[head.count..<(name.count - 1)].allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
                return true
            default:
                return false
            }
        }
    }

    /// Starts the background purge when ``RedisCacheConfiguration/purgeInterval`` is set: one
    /// ``purgeStep(cursor:)`` per interval of the tier's clock, until ``close()`` or release.
    func startPurging() {
        guard let interval = configuration.purgeInterval else { return }
        let clock = configuration.clock
        let task = Task { [weak self] in
            var cursor = PurgeCursor()
            while true {
                do {
                    try await clock.sleep(until: clock.now.addingTimeInterval(interval.timeInterval))
                } catch {
                    return  // cancelled: the cache closed or went away
                }
                guard let self else { return }
                do {
                    cursor = try await self.purgeStep(cursor: cursor).next
                } catch is CancellationError {
                    return
                } catch {
                    self.report(.maintenanceFailed, "purging entries of older epochs failed: \(error)")
                }
                self.purgeTicks.withLock { $0 += 1 }
            }
        }
        purgeTask.withLock { $0 = task }
    }

    /// Stops the background purge, if any.
    func stopPurging() {
        purgeTask.withLock { $0?.cancel() }
    }
}

/// Where a purge continues: the node (an index into the nodes ``RedisCache/purgeStep(cursor:)`` scans: the server
/// alone standalone, each primary on a cluster) and that node's `SCAN` cursor. The initial value starts a pass
/// and is what the last step of a pass returns.
struct PurgeCursor: Equatable, Sendable {
    var node = 0
    var scan = Array("0".utf8)
}

import CacheCore
import RedisConnection

/// Where the tier's commands go: the configured server's connections, until that server turns out to be a
/// node of a Redis Cluster; from then on the cluster layer, which sends each command to the primary of its key's
/// slot (Docs/RedisCache.md, "Redis Cluster").
///
/// Discovery needs no setting: the standalone connection's handshake refuses a node in cluster mode
/// (``ConnectionError/Code/clusterMode``), and that refusal switches the route to a ``ClusterConnection`` seeded
/// with the configured address and its fallbacks, which reads the slot map from any of them and finds the
/// rest. The command that met the refusal is sent again through the cluster. The switch happens once per
/// instance and never goes back.
///
/// Every command names the key that routes it. The tier's names are laid out for it (NamespaceKeys): an entry
/// routes by its MAC, the namespace's counters share the namespace's slot, so a multi-key command never spans
/// two slots except the two reads built here for it (``values(of:)``).
///
/// Thread safety: the cluster, once made, sits behind a lock held only to read or set it.
final class ServerRoute: Sendable {
    let pool: ConnectionPool
    private let clusterConfiguration: ClusterConnection.Configuration
    private let discovered = Locked<ClusterConnection?>(nil)

    /// - Parameters:
    ///   - pool: The standalone server's connections.
    ///   - cluster: The settings of the cluster layer should the server be a cluster node.
    init(pool: ConnectionPool, cluster: ClusterConnection.Configuration) {
        self.pool = pool
        self.clusterConfiguration = cluster
    }

    /// The cluster layer, once the server turned out to be a cluster node.
    var cluster: ClusterConnection? { discovered.withLock { $0 } }

    /// The cluster layer, made on the first refusal.
    private func discover() -> ClusterConnection {
        discovered.withLock { cluster in
            if let cluster { return cluster }
            let made = ClusterConnection(configuration: clusterConfiguration)
            cluster = made
            return made
        }
    }

    /// Whether a standalone request's `error` means the server is a cluster node: the handshake's refusal of
    /// one, or any failure after a connection of the pool met that refusal (the requests that came after it fail
    /// with the breaker it opened). A sentinel's refusal is not one: it stays `clusterMode` for the caller.
    func isClusterNode(_ error: any Error) -> Bool {
        guard let error = error as? ConnectionError else { return false }
        // Counted before the failures are delivered (IOLoop.drop), so no request after the refusal misses it.
        return error == .clusterNodeRefused || pool.statistics.clusterNodeRefusals > 0
    }

    /// Sends `command`, routed by `key` on a cluster.
    ///
    /// - Throws: ``ConnectionError`` (the server's error reply or the transport's failure); `CancellationError`.
    func send(_ command: RESPCommand, key: [UInt8]) async throws -> RESPValue {
        if let cluster { return try await cluster.send(command, key: key) }
        do {
            return try await pool.send(command)
        } catch {
            guard isClusterNode(error) else { throw error }
            return try await discover().send(command, key: key)
        }
    }

    /// The values of `keys` (`GET` of each, a `nil` reply for a missing one), in their order: one `MGET` on a
    /// standalone server; on a cluster one `GET` per key, the keys of each primary written as one run and the
    /// primaries asked concurrently (an `MGET` across slots would fail with `CROSSSLOT`).
    ///
    /// - Throws: The first key's failure, as ``send(_:key:)`` throws it.
    /// - Complexity: One round trip (one per primary, concurrently, on a cluster).
    func values(of keys: [[UInt8]]) async throws -> [RESPValue] {
        if cluster == nil {
            do {
                let reply = try await pool.send(RESPCommand(arguments: [RESPCommand.mget] + keys))
                guard case .array(let items) = reply, items.count == keys.count else {
                    throw ConnectionError(.protocolViolation, "the server answered MGET with \(reply)")
                }
                return items
            } catch {
                guard isClusterNode(error) else { throw error }
                _ = discover()
            }
        }
        guard let cluster else { throw ConnectionError(.connectionClosed, "no route to the server") }
        let replies = try await cluster.send(batch: keys.map { (RESPCommand(arguments: [Array("GET".utf8), $0]), $0) })
        return try replies.map { try $0.get() }
    }

    /// Runs `body` on one connection to the server, on a cluster the connection of the primary that serves
    /// `key`'s slot (commands that must share a connection: a write and its `WAIT`).
    ///
    /// - Throws: What `body` throws; what routing throws on a cluster; `CancellationError`.
    func withConnection<Result>(
        forKey key: [UInt8], _ body: (RedisConnection) async throws -> Result
    ) async throws -> Result {
        if let cluster { return try await cluster.withPrimary(forKey: key, body) }
        do {
            return try await pool.withConnection(body)
        } catch {
            guard isClusterNode(error) else { throw error }
            return try await discover().withPrimary(forKey: key, body)
        }
    }

    /// The nodes a full `SCAN` of the tier's keys must visit: the server (`nil`) standalone, each primary of the
    /// map on a cluster (each holds only its slots' keys).
    ///
    /// - Throws: What reading the cluster's map throws.
    func scanNodes() async throws -> [RedisConnection.Address?] {
        guard let cluster else { return [nil] }
        // Sorted: a purge's cursor names a node by its index across steps, and two reads of the map (from two
        // nodes: each lists the shards in its own order) can list the same primaries in another order.
        return try await cluster.primaries().sorted { ($0.host, $0.port) < ($1.host, $1.port) }
    }

    /// Sends `command` to `node` itself (`nil`: the standalone server), without redirection.
    func send(_ command: RESPCommand, toNode node: RedisConnection.Address?) async throws -> RESPValue {
        guard let node else { return try await pool.send(command) }
        guard let cluster else { throw ConnectionError(.connectionClosed, "no cluster to route to \(node)") }
        return try await cluster.send(command, toNode: node)
    }

    /// Removes `names` and returns how many existed: one `UNLINK` on a standalone server; on a cluster one per
    /// name, batched per primary (their slots differ).
    func unlink(_ names: [[UInt8]]) async throws -> Int {
        guard let cluster else {
            let reply = try await pool.send(RESPCommand(arguments: [Array("UNLINK".utf8)] + names))
            guard case .integer(let count) = reply else {
                throw ConnectionError(.protocolViolation, "the server did not answer UNLINK with a count")
            }
            return Int(count)
        }
        let replies = try await cluster.send(
            batch: names.map { (RESPCommand(arguments: [Array("UNLINK".utf8), $0]), $0) })
        return try replies.reduce(0) { total, reply in
            guard case .integer(let count) = try reply.get() else {
                throw ConnectionError(.protocolViolation, "a node did not answer UNLINK with a count")
            }
            return total + Int(count)
        }
    }

    /// Every connection's counters added up: the server's, or every cluster node's once on a cluster.
    var statistics: RedisConnection.Statistics {
        guard let cluster else { return pool.statistics }
        return cluster.nodeStatistics.values.reduce(into: RedisConnection.Statistics()) { total, next in
            total.add(next)
        }
    }

    /// Whether every connection's breaker is open: the server's, or on a cluster every node's.
    var isUnavailable: Bool {
        guard let cluster else { return pool.isUnavailable }
        return cluster.isUnavailable
    }

    /// Closes the standalone connections and the cluster's, if any; returns once their threads have exited.
    func close() async {
        await pool.close()
        await cluster?.close()
    }
}

extension ClusterConnection {
    /// Runs `body` on the connection of the primary that serves `key`'s slot, leased for the whole of `body`:
    /// for commands that must share one connection, such as a write and the `WAIT` that counts its replicas.
    ///
    /// Nothing inside `body` is redirected: a `MOVED` or `ASK` reply is `body`'s to handle (the caller may send
    /// the command again through ``send(_:key:)``, which follows it).
    ///
    /// - Parameters:
    ///   - key: The key that decides the slot.
    ///   - body: The work on the primary's connection.
    /// - Returns: What `body` returns.
    /// - Throws: What routing throws (no map, no primary for the slot by the deadline), what `body` throws,
    ///   ``ConnectionError/Code/connectionClosed`` after ``close()``; `CancellationError`.
    package func withPrimary<Result>(
        forKey key: [UInt8], _ body: (RedisConnection) async throws -> Result
    ) async throws -> Result {
        let deadline = configuration.now() + configuration.operationTimeout
        let slot = HashSlot(key: key)
        while true {
            let route = try await primary(for: slot, deadline: deadline)
            do {
                return try await withConnection(to: route, body)
            } catch is StaleRoute {
                continue  // a newer map retired the node between routing and leasing: route again
            }
        }
    }

    /// Sends `command` to the node at `address` itself, without redirection: for commands about one node's
    /// own keys, such as `SCAN`.
    ///
    /// - Parameters:
    ///   - command: The command.
    ///   - address: The node, usually one of ``primaries()``.
    /// - Returns: The reply; never an error reply.
    /// - Throws: ``ConnectionError``: the node's error reply or its connection's failure;
    ///   ``ConnectionError/Code/connectionClosed`` after ``close()``; `CancellationError`.
    package func send(_ command: RESPCommand, toNode address: RedisConnection.Address) async throws -> RESPValue {
        do {
            return try await withConnection(to: address) { connection in try await connection.send(command) }
        } catch let error as ConnectionError {
            if Self.suggestsFailover(error) { refreshSoon() }
            throw error
        }
    }

    /// The primaries of the map in use, reading the map first when none was read yet.
    ///
    /// - Returns: Each primary's address once, in the map's order.
    /// - Throws: What ``refreshTopology()`` throws.
    package func primaries() async throws -> [RedisConnection.Address] {
        if let topology { return topology.primaries }
        return try await refreshTopology().primaries
    }

    /// Whether the cluster has connections and every one's breaker is open, so that every command fails at once.
    package var isUnavailable: Bool {
        let connections = nodeConnectionsByAddress.values
        return !connections.isEmpty && connections.allSatisfy { $0.state == .unavailable }
    }

    /// Each node's connection counters and whether its breaker is open now, by address (retired connections
    /// left out).
    package var nodeStates: [RedisConnection.Address: (statistics: RedisConnection.Statistics, isUnavailable: Bool)] {
        nodeConnectionsByAddress.mapValues { ($0.statistics, $0.state == .unavailable) }
    }
}

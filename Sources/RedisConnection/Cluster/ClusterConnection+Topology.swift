extension ClusterConnection {
    /// Reads the slot map from the cluster and puts it in use; concurrent callers share one read.
    ///
    /// Asks the known primaries, then the seeds, one node at a time until one answers: `CLUSTER SHARDS`,
    /// or `CLUSTER SLOTS` where the server does not know it (before 7.0). Commands call it when there is no
    /// map or the map names no primary for a slot; redirects and failures read it in the background instead
    /// (``refreshSoon()``, rate-limited).
    ///
    /// - Returns: The map now in use.
    /// - Throws: ``ConnectionError``: the first node's failure when no node answered with a map (a
    ///   malformed reply is ``ConnectionError/Code/protocolViolation``); `CancellationError`.
    /// - Complexity: One or two round trips per node asked, O(16,384) to index the map.
    @discardableResult
    package func refreshTopology() async throws -> ClusterTopology {
        try await sharedRefresh { Task { try await self.readTopology() } }.value
    }

    /// ``readTopology()`` for ``refreshSoon()``, which installed the task itself.
    func readTopologyInBackground() async throws -> ClusterTopology {
        try await readTopology()
    }

    /// Asks each candidate node in turn; the first map read wins.
    private func readTopology() async throws -> ClusterTopology {
        defer { refreshEnded() }
        var candidates = topology?.primaries ?? []
        for seed in configuration.seeds where !candidates.contains(seed) { candidates.append(seed) }
        // A node whose last command failed is asked last: a stalled primary would hold the read for a whole
        // read deadline, and the read is what finds its replacement.
        let failing = failingAddresses()
        candidates = candidates.filter { !failing.contains($0) } + candidates.filter { failing.contains($0) }
        var firstFailure: (any Error)?
        for address in candidates {
            do {
                let topology = try await readTopology(from: address)
                for connection in install(topology) { await connection.close() }
                configuration.onTopology?(topology)
                return topology
            } catch {
                try Task.checkCancellation()
                noteMapReadFailure()
                if firstFailure == nil { firstFailure = error }
            }
        }
        throw firstFailure ?? ConnectionError(.connectFailed, "no cluster node to read the slot map from")
    }

    /// The map as the node at `address` sees it.
    private func readTopology(from address: RedisConnection.Address) async throws -> ClusterTopology {
        try await withConnection(to: address) { connection in try await Self.readTopology(from: connection, address) }
    }

    private static func readTopology(
        from connection: RedisConnection, _ address: RedisConnection.Address
    ) async throws -> ClusterTopology {
        do {
            let reply = try await connection.send(RESPCommand("CLUSTER", "SHARDS"))
            return try ClusterTopology(shardsReply: reply, queriedHost: address.host)
        } catch let error as ConnectionError where error.code == .serverError && error.message.contains("nknown") {
            // "ERR unknown subcommand 'SHARDS'": a server before 7.0.
            let reply = try await connection.send(RESPCommand("CLUSTER", "SLOTS"))
            return try ClusterTopology(slotsReply: reply, queriedHost: address.host)
        }
    }
}

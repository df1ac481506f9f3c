extension ClusterConnection {
    /// One command of a batch and the key that routes it.
    package typealias BatchCommand = (command: RESPCommand, key: [UInt8])

    /// Sends every command of `batch` to the primary of its key's slot: the commands bound for one primary as
    /// one run written back to back on its connection, the primaries concurrently, so a batch over keys of
    /// every slot costs one round trip per primary — never a `CROSSSLOT` error, which a multi-key command
    /// over such keys would get.
    ///
    /// A command answered with a redirection or a passing cluster state (`MOVED`, `ASK`, `TRYAGAIN`,
    /// `CLUSTERDOWN`, `LOADING`) is sent again on its own through ``send(_:key:)``, which follows it inside the
    /// operation's deadline; any other failure is that command's result, and a node's failure that a failover
    /// explains starts a read of the map, as for a single command.
    ///
    /// - Parameter batch: The commands and their keys (for a multi-key command, any of its keys, which must all
    ///   share a slot).
    /// - Returns: Each command's reply or error, in the order of `batch`.
    /// - Throws: What reading the map throws when there is no map to route by; `CancellationError`.
    /// - Complexity: O(n) for n commands, plus one round trip per primary the batch reaches (and one per
    ///   redirected command).
    package func send(batch: [BatchCommand]) async throws -> [Result<RESPValue, any Error>] {
        let deadline = ContinuousClock.now + configuration.operationTimeout
        var groups: [RedisConnection.Address: [Int]] = [:]
        for (index, entry) in batch.enumerated() {
            let primary = try await primary(for: HashSlot(key: entry.key), deadline: deadline)
            groups[primary, default: []].append(index)
        }
        var results = [Result<RESPValue, any Error>?](repeating: nil, count: batch.count)
        try await withThrowingTaskGroup(of: [(Int, Result<RESPValue, any Error>)].self) { tasks in
            for (address, indices) in groups {
                tasks.addTask { try await self.sendRun(indices.map { batch[$0] }, to: address, indices: indices) }
            }
            for try await run in tasks {
                for (index, result) in run { results[index] = result }
            }
        }
        // Every index is in one group and every run answers each of its commands; a gap would be a bug of
        // the connection layer, reported as such rather than trapped.
        return results.map { $0 ?? .failure(ConnectionError(.protocolViolation, "no reply to a command of a batch")) }
    }

    /// One primary's part of a batch: written as one run, then each redirected or retryable command alone.
    private func sendRun(
        _ commands: [BatchCommand], to address: RedisConnection.Address, indices: [Int]
    ) async throws -> [(Int, Result<RESPValue, any Error>)] {
        let replies = try await withConnection(to: address) { connection in
            try await connection.send(adjacent: commands.map(\.command))
        }
        var results: [(Int, Result<RESPValue, any Error>)] = []
        results.reserveCapacity(commands.count)
        for (offset, reply) in replies.enumerated() {
            guard case .failure(let error as ConnectionError) = reply else {
                results.append((indices[offset], reply))
                continue
            }
            switch Self.disposition(of: error, queriedHost: address.host) {
            case .redirect, .retry:
                let entry = commands[offset]
                do {
                    results.append((indices[offset], .success(try await send(entry.command, key: entry.key))))
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    results.append((indices[offset], .failure(error)))
                }
            case .fail:
                if Self.suggestsFailover(error) { refreshSoon() }
                results.append((indices[offset], reply))
            }
        }
        return results
    }
}

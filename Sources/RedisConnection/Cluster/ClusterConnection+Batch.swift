extension ClusterConnection {
    /// One command of a batch and the key that routes it.
    package typealias BatchCommand = (command: RESPCommand, key: [UInt8])

    /// Sends every command of `batch` to the primary of its key's slot: the commands bound for one primary as
    /// one run written back to back on its connection, the primaries concurrently, so a batch over keys of
    /// every slot costs one round trip per primary — never a `CROSSSLOT` error, which a multi-key command
    /// over such keys would get.
    ///
    /// A command answered with a redirection or a passing cluster state (`MOVED`, `ASK`, `TRYAGAIN`,
    /// `CLUSTERDOWN`, `LOADING`) is sent again on its own, as ``send(_:key:)`` would, inside the batch's one
    /// operation deadline (a command whose deadline has passed keeps its reply as its result); a `MOVED`
    /// updates the map as for a single command. Any other failure is that command's result, and a node's
    /// failure that a failover explains starts a read of the map, as for a single command. A command whose
    /// slot no primary serves (even after a read of the map) fails alone, with `CLUSTERDOWN`.
    ///
    /// - Parameter batch: The commands and their keys (for a multi-key command, any of its keys, which must all
    ///   share a slot).
    /// - Returns: Each command's reply or error, in the order of `batch`.
    /// - Throws: `CancellationError`.
    /// - Complexity: O(n) for n commands, plus one round trip per primary the batch reaches (and one per
    ///   redirected command).
    package func send(batch: [BatchCommand]) async throws -> [Result<RESPValue, any Error>] {
        // Read from the configuration's clock, not the real one, and checked against it before each retry: a
        // test steps that clock past the deadline between a reply and its retry, so whether a late retry is
        // sent does not depend on how fast the machine runs (real timeouts made that test flaky under load).
        let deadline = configuration.now() + configuration.operationTimeout
        var groups: [Route: [Int]] = [:]
        var results = [Result<RESPValue, any Error>?](repeating: nil, count: batch.count)
        for (index, entry) in batch.enumerated() {
            do {
                let primary = try await primary(for: HashSlot(key: entry.key), deadline: deadline)
                groups[primary, default: []].append(index)
            } catch let error as ConnectionError {
                // No primary for this slot (or no map at all): this command's failure, not the batch's.
                results[index] = .failure(error)
            }
        }
        try await withThrowingTaskGroup(of: [(Int, Result<RESPValue, any Error>)].self) { tasks in
            for (route, indices) in groups {
                tasks.addTask {
                    try await self.sendRun(indices.map { batch[$0] }, to: route, indices: indices, deadline: deadline)
                }
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
        _ commands: [BatchCommand], to route: Route, indices: [Int], deadline: ContinuousClock.Instant
    ) async throws -> [(Int, Result<RESPValue, any Error>)] {
        let replies: [Result<RESPValue, any Error>]
        do {
            replies = try await withConnection(to: route) { connection in
                try await connection.send(adjacent: commands.map(\.command))
            }
        } catch is StaleRoute {
            // A newer map retired the node: each command routes again on its own.
            replies = commands.map { _ in .failure(StaleRoute()) }
        }
        var results: [(Int, Result<RESPValue, any Error>)] = []
        results.reserveCapacity(commands.count)
        for (offset, reply) in replies.enumerated() {
            let entry = commands[offset]
            switch reply {
            case .failure(let error as ConnectionError):
                switch Self.disposition(of: error, queriedHost: route.address.host) {
                case .redirect(let redirect):
                    if redirect.kind == .moved {
                        _ = follow(redirect)
                        refreshSoon()
                    }
                    results.append((indices[offset], try await resend(entry, deadline: deadline, orElse: reply)))
                case .retry:
                    results.append((indices[offset], try await resend(entry, deadline: deadline, orElse: reply)))
                case .fail:
                    if Self.suggestsFailover(error) { refreshSoon() }
                    results.append((indices[offset], reply))
                }
            case .failure(is StaleRoute):
                results.append((indices[offset], try await resend(entry, deadline: deadline, orElse: reply)))
            default:
                results.append((indices[offset], reply))
            }
        }
        return results
    }

    /// `entry` sent again on its own inside the batch's `deadline`, or `reply` once the deadline has passed.
    private func resend(
        _ entry: BatchCommand, deadline: ContinuousClock.Instant, orElse reply: Result<RESPValue, any Error>
    ) async throws -> Result<RESPValue, any Error> {
        guard configuration.now() < deadline else {
            if case .failure(is StaleRoute) = reply {
                return .failure(ConnectionError(.deadlineExceeded, "the cluster's map changed past the deadline"))
            }
            return reply
        }
        do {
            return .success(try await send(entry.command, key: entry.key, deadline: deadline))
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            return .failure(error)
        }
    }
}

import CacheCore

extension ClusterConnection {
    /// One command of a batch and the key that routes it.
    package typealias BatchCommand = (command: RESPCommand, key: [UInt8])

    /// Sends every command of `batch` to the primary of its key's slot: the commands bound for one primary as
    /// one run written back to back on its connection, the primaries concurrently, so a batch over keys of
    /// every slot costs one round trip per primary — never a `CROSSSLOT` error, which a multi-key command
    /// over such keys would get. Runs of at most ``inlineRunLimit`` commands are sent as single requests,
    /// inline on the caller's thread where their connections are idle (``RedisConnection/send(together:caller:)``).
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
    ///   redirected command, those of different primaries one after another).
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
        // Every primary's run is submitted before any reply is awaited, and one wait gathers them all: no child
        // task per primary (creating and scheduling those cost a sequential read on a cluster several thread
        // hand-offs; Docs/Performance.md, "The Redis tier on a cluster").
        let runs = Array(groups)
        let replies = try await submit(runs.map { run in run.value.map { batch[$0].command } }, to: runs.map(\.key))
        for (run, runReplies) in zip(runs, replies) {
            let commands = run.value.map { batch[$0] }
            for (index, result) in try await settle(
                commands, runReplies, from: run.key, indices: run.value, deadline: deadline)
            {
                results[index] = result
            }
        }
        // Every index is in one group and every run answers each of its commands; a gap would be a bug of
        // the connection layer, reported as such rather than trapped.
        return results.map { $0 ?? .failure(ConnectionError(.protocolViolation, "no reply to a command of a batch")) }
    }

    /// Writes each of `runs` to the connection of its route and waits once for every reply: a run of one
    /// command as a single request (an inline exchange when its connection is idle, so a sequential caller
    /// pays no hand-off to the I/O thread), a longer run as one adjacent run. A route whose node a newer map
    /// retired answers each of its commands with ``StaleRoute``.
    ///
    /// - Returns: Each run's replies, in the order of `runs`.
    /// - Throws: `CancellationError` before anything is sent; what leasing a connection throws
    ///   (``ConnectionError/Code/connectionClosed`` after ``close()``, no descriptor left).
    private func submit(
        _ runs: [[RESPCommand]], to routes: [Route]
    ) async throws -> [[Result<RESPValue, any Error>]] {
        try Task.checkCancellation()
        guard !runs.isEmpty else { return [] }
        var leased: [RedisConnection?] = []
        leased.reserveCapacity(routes.count)
        do {
            for route in routes {
                do {
                    leased.append(try lease(route.address, routedBy: route.generation))
                } catch is StaleRoute {
                    leased.append(nil)
                }
            }
        } catch {
            await releaseAll(leased)
            throw error
        }
        let caller = withUnsafeCurrentTask { $0?.hashValue ?? 0 }
        var starts: [Int] = []
        var total = 0
        for run in runs {
            starts.append(total)
            total += run.count
        }
        let replies = await withCheckedContinuation {
            (continuation: CheckedContinuation<[Result<RESPValue, any Error>], Never>) in
            let gathered = BatchReplies(count: total, continuation: continuation)
            var together: [RedisConnection.TogetherRequest] = []
            for (position, connection) in leased.enumerated() {
                let run = runs[position]
                let start = starts[position]
                guard let connection else {
                    for offset in run.indices { gathered.record(.failure(StaleRoute()), at: start + offset) }
                    continue
                }
                if run.count <= Self.inlineRunLimit {
                    for (offset, command) in run.enumerated() {
                        together.append(
                            .init(connection: connection, command: command) { gathered.record($0, at: start + offset) })
                    }
                } else {
                    connection.send(adjacent: run) { replies in
                        for (offset, reply) in replies.enumerated() { gathered.record(reply, at: start + offset) }
                    }
                }
            }
            RedisConnection.send(together: together, caller: caller)
        }
        await releaseAll(leased)
        return runs.indices.map { Array(replies[starts[$0]..<starts[$0] + runs[$0].count]) }
    }

    /// The longest run sent as single requests (inline when their connections are idle); longer runs are
    /// written as one adjacent run by the connection's I/O thread. Two covers a read's epoch and entry.
    static var inlineRunLimit: Int { 2 }

    /// Ends one command's use of each of `connections`, closing those a newer map retired meanwhile.
    private func releaseAll(_ connections: [RedisConnection?]) async {
        for connection in connections {
            if let connection, let retired = release(connection) { await retired.close() }
        }
    }

    /// One primary's part of a batch once its run was answered: each redirected or retryable command sent
    /// again alone.
    private func settle(
        _ commands: [BatchCommand], _ replies: [Result<RESPValue, any Error>], from route: Route, indices: [Int],
        deadline: ContinuousClock.Instant
    ) async throws -> [(Int, Result<RESPValue, any Error>)] {
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
                    results.append((indices[offset], .failure(Self.naming(route.address, in: error))))
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

/// Gathers the replies of a batch's commands from several connections and resumes its one waiter once the
/// last has answered.
private final class BatchReplies: Sendable {
    private let replies: Locked<(results: [Result<RESPValue, any Error>?], remaining: Int)>
    private let continuation: CheckedContinuation<[Result<RESPValue, any Error>], Never>

    init(count: Int, continuation: CheckedContinuation<[Result<RESPValue, any Error>], Never>) {
        replies = Locked((Array(repeating: nil, count: count), count))
        self.continuation = continuation
    }

    /// Records the reply of command `index`; the last one resumes the waiter with all of them.
    func record(_ reply: Result<RESPValue, any Error>, at index: Int) {
        let finished: [Result<RESPValue, any Error>]? = replies.withLock { replies in
            replies.results[index] = reply
            replies.remaining -= 1
            guard replies.remaining == 0 else { return nil }
            return replies.results.map {
                $0 ?? .failure(ConnectionError(.protocolViolation, "no reply to a command of a batch"))
            }
        }
        if let finished { continuation.resume(returning: finished) }
    }
}

import CacheCore

/// A few ``RedisConnection``s to one server, and the choice of one per request: the Redis tier's
/// transport when its configuration's `connectionCount` is above 1.
///
/// - **Choice.** Each request goes to the connection with the fewest requests in flight, the lowest index
///   on a tie, skipping connections whose breaker is open while another is not. A sequential caller so
///   stays on the first connection (its inline exchanges stay warm), and a request never queues behind a
///   large value being written or read on a busy connection while another connection is idle. With one
///   connection the pool adds nothing: no lock, no bookkeeping.
/// - **Order.** Requests on different connections are not ordered against each other; only a request sent
///   after another's reply arrived is executed after it (Redis runs commands one at a time). The tier's
///   epoch fence relies on exactly that: `removeAll()` returns after the `INCR` reply, and every later
///   read carries the epoch in its own `MGET`.
/// - **Failures.** Every connection has its own deadlines, reconnects and breaker.
///
/// Thread safety: every method may be called from any thread or task; the in-flight counts are under a
/// lock held for a few instructions.
package final class ConnectionPool: Sendable {
    /// The connections, in choice order; never empty.
    package let connections: [RedisConnection]
    private let inFlight: Locked<[Int]>

    /// Creates `count` connections with one configuration and starts their I/O threads; each connects on
    /// its first request.
    ///
    /// - Parameters:
    ///   - count: How many connections, at least 1.
    ///   - configuration: Server, credentials and deadlines shared by all of them.
    /// - Throws: What ``RedisConnection/init(configuration:)`` throws; connections already made are closed.
    package init(count: Int, configuration: RedisConnection.Configuration) throws(ConnectionError) {
        var connections: [RedisConnection] = []
        for _ in 0..<max(1, count) {
            // A connection released here closes itself (its deinit stops its thread).
            connections.append(try RedisConnection(configuration: configuration))
        }
        self.connections = connections
        inFlight = Locked([Int](repeating: 0, count: connections.count))
    }

    /// The first connection: the one a sequential caller uses, and the one tests inspect.
    package var primary: RedisConnection { connections[0] }

    /// Sends `command` on the connection ``choose()`` picks and waits for its reply.
    ///
    /// - Parameter command: The command.
    /// - Returns: The server's reply.
    /// - Throws: What ``RedisConnection/send(_:)`` throws.
    package func send(_ command: RESPCommand) async throws -> RESPValue {
        guard connections.count > 1 else { return try await connections[0].send(command) }
        let index = choose()
        defer { release(index) }
        return try await connections[index].send(command)
    }

    /// Runs `body` on the connection ``choose()`` picks, counted as one request in flight on it: for commands
    /// that must share a connection (`WAIT` counts the writes of its own connection).
    ///
    /// - Parameter body: The work on the connection.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    package func withConnection<Result>(_ body: (RedisConnection) async throws -> Result) async throws -> Result {
        guard connections.count > 1 else { return try await body(connections[0]) }
        let index = choose()
        defer { release(index) }
        return try await body(connections[index])
    }

    /// Picks a connection for one request and counts the request in flight on it.
    ///
    /// - Returns: The index of the connection with the fewest requests in flight among those whose breaker
    ///   is closed (among all when every breaker is open), the lowest on a tie.
    /// - Complexity: O(*n*) in the number of connections (at most 16).
    func choose() -> Int {
        // Read before the lock: a connection's state has its own lock, and a stale answer only costs one
        // request a fast failure on a connection that just opened its breaker.
        let available = connections.map { $0.state != .unavailable }
        let anyAvailable = available.contains(true)
        return inFlight.withLock { counts in
            var best = -1
            for index in counts.indices where available[index] || !anyAvailable {
                if best < 0 || counts[index] < counts[best] { best = index }
            }
            counts[best] += 1
            return best
        }
    }

    /// Ends one request counted by ``choose()`` on connection `index`.
    func release(_ index: Int) {
        inFlight.withLock { $0[index] -= 1 }
    }

    /// Every connection's counters added up.
    package var statistics: RedisConnection.Statistics {
        connections.map(\.statistics).reduce(into: RedisConnection.Statistics()) { $0.add($1) }
    }

    /// Whether every connection's breaker is open, so that every request fails at once.
    package var isUnavailable: Bool { connections.allSatisfy { $0.state == .unavailable } }

    /// Closes every connection; returns once their threads have exited.
    package func close() async {
        for connection in connections { await connection.close() }
    }
}

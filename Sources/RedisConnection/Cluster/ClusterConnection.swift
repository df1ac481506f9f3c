import CacheCore

/// Commands to a Redis Cluster, each sent to the primary serving its key's slot over one multiplexed
/// ``RedisConnection`` per node, following the cluster's redirections.
///
/// - **Routing.** The command goes to the primary that ``ClusterTopology`` names for
///   ``HashSlot/init(key:)`` of its routing key. The first command reads the map (`CLUSTER SHARDS`, else
///   `CLUSTER SLOTS`) from the seeds; see ``refreshTopology()``.
/// - **`MOVED`.** The slot lives elsewhere for good: the map is updated for that slot
///   (``ClusterTopology/assigning(_:to:)``) and the command is sent there.
/// - **`ASK`.** For this command only: `ASKING` and the command go to the named node as one adjacent pair
///   (``RedisConnection/send(adjacent:)``); the map does not change.
/// - **`TRYAGAIN`, `CLUSTERDOWN`, `LOADING`.** Retried after a wait that starts at
///   ``Configuration/retryDelay`` and doubles, within the operation's deadline.
/// - **Limits.** At most ``Configuration/maximumRedirects`` redirections, and no attempt starts after
///   ``Configuration/operationTimeout``; then the last error is thrown.
///
/// - **Refresh.** A `MOVED`, a `CLUSTERDOWN` or a node's failure (no connection, no reply in time, a
///   replica's refusal) starts one background read of the whole map, at most one per
///   ``Configuration/minimumRefreshInterval`` and never two at once, so a failover is found by the next
///   commands and a resharding does not turn every redirect into a read of the map. A trigger that comes
///   within the interval is kept: the first command after the interval ends starts the read it asked for.
///
/// - **Nodes that leave.** When a read of the map no longer names a node as the primary of any slot (a
///   failed-over or removed primary) and it is not a seed, its connection is retired: no new command uses it, and it
///   closes as soon as the last command already on it has ended.
///
/// - **Failures stay per node.** Each node's connection has its own deadlines, reconnects and breaker
///   (``nodeStatistics``): a stopped primary fails the commands of its slots, first by its read deadline,
///   then at once while its breaker is open, and no other node's. A read of the map asks a node whose last
///   command failed last, and the next command after a map older than
///   ``Configuration/periodicRefreshInterval`` reads it again in the background.
///
/// Tracking per primary is the Redis tier's, which follows the maps read here through
/// ``Configuration/onTopology`` (Docs/RedisCache.md, "Redis Cluster").
///
/// Thread safety: every method may be called from any task; the map and the connections sit behind one
/// lock held only to read or swap them.
package final class ClusterConnection: Sendable {
    /// The settings this connection was created with.
    package let configuration: Configuration

    private struct State {
        var topology: ClusterTopology?
        /// Counts the maps put in use (``install(_:)``): a route read from an older map may name a node whose
        /// connection that install retired, so its lease is checked again (``lease(_:routedBy:)``).
        var generation: UInt64 = 0
        var connections: [RedisConnection.Address: RedisConnection] = [:]
        /// Commands running on each connection, so that a retired one closes when its last has ended.
        var leases: [ObjectIdentifier: Int] = [:]
        /// Connections of nodes that left the map, still carrying commands; closed by the last to end.
        var retired: [ObjectIdentifier: RedisConnection] = [:]
        var statistics = Statistics()
        var isClosed = false
        /// The map read in flight, which concurrent callers await instead of reading their own.
        var refresh: Task<ClusterTopology, any Error>?
        /// When the last map read started (see ``Configuration/minimumRefreshInterval``).
        var lastRefreshStart: ContinuousClock.Instant?
        /// Whether a trigger came within the interval and was put off, to be read once the interval ends.
        var refreshOwed = false
    }
    private let state = Locked(State())

    /// Creates a cluster connection; it connects lazily, on the first command.
    ///
    /// - Parameter configuration: Seeds and node settings.
    package init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// The slot map in use, or `nil` before the first one was read.
    package var topology: ClusterTopology? { state.withLock { $0.topology } }

    /// A snapshot of the counters.
    package var statistics: Statistics { state.withLock { $0.statistics } }

    /// Sends `command` to the primary of `key`'s slot and returns its reply, following redirections.
    ///
    /// - Parameters:
    ///   - command: The command.
    ///   - key: The key that decides the slot (the command's key; for a multi-key command, any of its keys,
    ///     which must all share a slot).
    /// - Returns: The reply; never an error reply.
    /// - Throws: ``ConnectionError``: the node's error for anything but a redirection or a retryable state;
    ///   the last `MOVED`/`ASK` after too many; the last `TRYAGAIN`/`CLUSTERDOWN`/`LOADING` when the deadline
    ///   leaves no time to retry; a failure to read the map. `CancellationError` when the task is cancelled.
    package func send(_ command: RESPCommand, key: [UInt8]) async throws -> RESPValue {
        try await send(command, key: key, deadline: configuration.now() + configuration.operationTimeout)
    }

    /// ``send(_:key:)`` inside an operation's `deadline` already running (a batch's redirected command).
    func send(_ command: RESPCommand, key: [UInt8], deadline: ContinuousClock.Instant) async throws -> RESPValue {
        let slot = HashSlot(key: key)
        var redirects = 0
        var retries = 0
        var asked: Route?
        while true {
            let target: Route
            if let asked { target = asked } else { target = try await primary(for: slot, deadline: deadline) }
            do {
                return try await withConnection(to: target) { connection in
                    if asked != nil {
                        let replies = try await connection.send(adjacent: [RESPCommand("ASKING"), command])
                        return try replies[1].get()
                    }
                    return try await connection.send(command)
                }
            } catch is StaleRoute {
                // The map changed between routing and leasing and no longer names this node: route again.
                asked = nil
                continue
            } catch let error as ConnectionError {
                switch Self.disposition(of: error, queriedHost: target.address.host) {
                case .redirect(let redirect):
                    redirects += 1
                    // A MOVED slot says the map is out of date for more slots than this one.
                    if redirect.kind == .moved { refreshSoon() }
                    guard redirects <= configuration.maximumRedirects, configuration.now() < deadline else {
                        throw error
                    }
                    asked = follow(redirect)
                case .retry:
                    if error.message.hasPrefix("CLUSTERDOWN") { refreshSoon() }
                    let wait = configuration.retryDelay * (1 << min(retries, 16))
                    guard configuration.now() + wait < deadline else { throw error }
                    retries += 1
                    state.withLock { $0.statistics.retries += 1 }
                    try await Task.sleep(for: wait)
                    asked = nil
                case .fail:
                    // A node that is gone, stalled or no longer a primary: a failover may have moved its
                    // slots, which the next command should find.
                    if Self.suggestsFailover(error) { refreshSoon() }
                    throw Self.naming(target.address, in: error)
                }
            }
        }
    }

    /// Closes every node's connection; commands pending on them fail with
    /// ``ConnectionError/Code/connectionClosed``, later ones are refused.
    package func close() async {
        let (connections, refresh) = state.withLock { state in
            state.isClosed = true
            defer {
                state.connections = [:]
                state.retired = [:]
            }
            return (Array(state.connections.values) + state.retired.values, state.refresh)
        }
        refresh?.cancel()
        for connection in connections { await connection.close() }
    }

    // MARK: - Routing

    /// What to do after an error reply.
    enum Disposition { case redirect(ClusterRedirect), retry, fail }

    static func disposition(of error: ConnectionError, queriedHost: String) -> Disposition {
        switch error.code {
        case .moved, .ask:
            return ClusterRedirect(error.message, queriedHost: queriedHost).map(Disposition.redirect) ?? .fail
        case .loading:
            return .retry
        case .serverError where error.message.hasPrefix("TRYAGAIN") || error.message.hasPrefix("CLUSTERDOWN"):
            return .retry
        default:
            return .fail
        }
    }

    /// `error` with the node it came from at the start of its message, when it is a failure of the node's
    /// connection (whose message does not say which of the cluster's nodes failed); server replies unchanged.
    static func naming(_ address: RedisConnection.Address, in error: ConnectionError) -> ConnectionError {
        switch error.code {
        case .connectFailed, .connectionClosed, .unavailable, .deadlineExceeded:
            let node = "\(address.host):\(address.port)"
            return error.message.contains(node) ? error : ConnectionError(error.code, "node \(node): \(error.message)")
        default:
            return error
        }
    }

    /// Whether `error` is what a failed or demoted primary gives: no connection, no reply in time, or a
    /// replica's refusal to write.
    static func suggestsFailover(_ error: ConnectionError) -> Bool {
        switch error.code {
        case .connectFailed, .connectionClosed, .unavailable, .deadlineExceeded, .readOnly, .replica: true
        default: false
        }
    }

    /// Applies `redirect`: a `MOVED` changes the map and returns `nil` (route by the map again), an `ASK`
    /// returns the node for the next attempt only.
    func follow(_ redirect: ClusterRedirect) -> Route? {
        state.withLock { state in
            switch redirect.kind {
            case .moved:
                state.statistics.movedRedirects += 1
                state.topology = state.topology?.assigning(redirect.slot, to: redirect.address)
                return nil
            case .ask:
                state.statistics.askRedirects += 1
                return Route(address: redirect.address, generation: state.generation)
            }
        }
    }

    /// The primary of `slot`, reading the map first when there is none or it names no primary for the slot
    /// (then `CLUSTERDOWN` is what the caller sees once the deadline passes).
    func primary(for slot: HashSlot, deadline: ContinuousClock.Instant) async throws -> Route {
        let now = configuration.now()
        let (known, stale, owed) = state.withLock { state in
            let age = state.lastRefreshStart.map { now - $0 }
            let stale = age.map { $0 >= configuration.periodicRefreshInterval } ?? false
            // A redirect put off by the interval: without this, a resharding's slots that no command has
            // been redirected from yet would each cost a redirect until the periodic read.
            let owed = state.refreshOwed && (age.map { $0 >= configuration.minimumRefreshInterval } ?? true)
            let known = state.topology?.primary(for: slot).map { Route(address: $0, generation: state.generation) }
            return (known, stale, owed)
        }
        if owed {
            refreshSoon()
        } else if stale {
            refreshSoon(periodic: true)
        }
        if let known { return known }
        var wait = configuration.retryDelay
        while true {
            try await refreshTopology()
            if let route = state.withLock({ state in
                state.topology?.primary(for: slot).map { Route(address: $0, generation: state.generation) }
            }) {
                return route
            }
            guard configuration.now() + wait < deadline else {
                throw ConnectionError(.serverError, "CLUSTERDOWN no primary serves slot \(slot) in the cluster's map")
            }
            try await Task.sleep(for: wait)
            wait *= 2
        }
    }

    /// Puts `topology` in use, counts the read, and retires the connections of nodes it no longer routes
    /// to (neither the primary of a slot nor a seed); returns those no command is using, for the caller to
    /// close.
    func install(_ topology: ClusterTopology) -> [RedisConnection] {
        let kept = Set(topology.primaries + configuration.seeds)
        return state.withLock { state in
            state.topology = topology
            state.generation &+= 1
            state.statistics.topologyRefreshes += 1
            var idle: [RedisConnection] = []
            for (address, connection) in state.connections where !kept.contains(address) {
                state.connections[address] = nil
                state.statistics.retiredConnections += 1
                if state.leases[ObjectIdentifier(connection), default: 0] == 0 {
                    idle.append(connection)
                } else {
                    state.retired[ObjectIdentifier(connection)] = connection
                }
            }
            return idle
        }
    }

    /// The map read in flight, or the one `start` begins (kept as in flight until ``refreshEnded()``).
    func sharedRefresh(_ start: () -> Task<ClusterTopology, any Error>) -> Task<ClusterTopology, any Error> {
        state.withLock { state in
            if let refresh = state.refresh { return refresh }
            // Made under the lock: the task's own `refreshEnded()` waits for it, so it cannot clear the slot
            // before it was filled.
            let task = start()
            state.refresh = task
            state.lastRefreshStart = configuration.now()
            state.refreshOwed = false
            return task
        }
    }

    /// Waits for the read of the map in flight, if any, to end (whether it read a map or not).
    package func waitForRefresh() async {
        _ = try? await state.withLock { $0.refresh }?.value
    }

    /// Starts a read of the map in the background, unless the connection is closed, one is in flight, or one
    /// started less than ``Configuration/minimumRefreshInterval`` ago; in those two cases a redirect's or a
    /// failure's trigger is kept, and the first command after the interval starts the read. Nothing waits
    /// for it: commands keep following redirects meanwhile, and a failed read is retried by the next trigger.
    ///
    /// - Parameter periodic: Whether the trigger is the map's age rather than a redirect or a failure.
    func refreshSoon(periodic: Bool = false) {
        state.withLock { state in
            guard !state.isClosed else { return }
            let now = configuration.now()
            // A read in flight may have begun before what this trigger saw changed (a resharding moves slot
            // after slot), so a trigger during one is put off as well: the last read follows the last change.
            let tooSoon = state.lastRefreshStart.map { now < $0 + configuration.minimumRefreshInterval } ?? false
            if state.refresh != nil || tooSoon {
                if !periodic { state.refreshOwed = true }
                return
            }
            state.lastRefreshStart = now
            state.refreshOwed = false
            if periodic { state.statistics.periodicRefreshes += 1 } else { state.statistics.backgroundRefreshes += 1 }
            // Made under the lock, as in `sharedRefresh`.
            state.refresh = Task { try await self.readTopologyInBackground() }
        }
    }

    /// Clears the read in flight, so the next refresh reads again.
    func refreshEnded() {
        state.withLock { $0.refresh = nil }
    }

    /// Runs `body` on the connection to `address` (made on first use), which stays open until `body` ends
    /// even if a read of the map retires it meanwhile; the last command on a retired connection closes it.
    ///
    /// - Throws: ``ConnectionError/Code/connectionClosed`` after ``close()``, what creating the connection
    ///   throws (no descriptor left), or what `body` throws.
    func withConnection<Result>(
        to address: RedisConnection.Address, _ body: (RedisConnection) async throws -> Result
    ) async throws -> Result {
        try await withConnection(to: Route(address: address, generation: nil), body)
    }

    /// ``withConnection(to:_:)`` for a command routed by a map: throws ``StaleRoute`` instead of connecting
    /// when a newer map retired the node (see ``lease(_:routedBy:)``).
    func withConnection<Result>(
        to route: Route, _ body: (RedisConnection) async throws -> Result
    ) async throws -> Result {
        let connection = try lease(route.address, routedBy: route.generation)
        let outcome: Swift.Result<Result, any Error>
        do { outcome = .success(try await body(connection)) } catch { outcome = .failure(error) }
        if let retired = release(connection) { await retired.close() }
        return try outcome.get()
    }

    /// The connection to `address`, made on first use, with one more command counted on it.
    ///
    /// A route read from a map older than the one in use (`generation` differs) is leased only if the map in
    /// use still routes to the node (a primary or a seed): otherwise the install in between retired its
    /// connection, and making a new one would bring back a node the cluster no longer uses, outside any
    /// retirement. Throws ``StaleRoute`` then, and the caller routes again.
    func lease(
        _ address: RedisConnection.Address, routedBy generation: UInt64?
    ) throws -> RedisConnection {
        try state.withLock { state in
            if let generation, generation != state.generation,
                !(state.topology?.primaries.contains(address) ?? true), !configuration.seeds.contains(address)
            {
                throw StaleRoute()
            }
            let connection = try connection(to: address, in: &state)
            state.leases[ObjectIdentifier(connection), default: 0] += 1
            return connection
        }
    }

    /// Ends one command's use of `connection`; returns it when it was retired and this was its last command.
    func release(_ connection: RedisConnection) -> RedisConnection? {
        state.withLock { state in
            let id = ObjectIdentifier(connection)
            let remaining = state.leases[id, default: 1] - 1
            state.leases[id] = remaining > 0 ? remaining : nil
            guard remaining <= 0 else { return nil }
            return state.retired.removeValue(forKey: id)
        }
    }

    /// The connection to `address` in `state`, made on first use.
    private func connection(
        to address: RedisConnection.Address, in state: inout State
    ) throws(ConnectionError) -> RedisConnection {
        guard !state.isClosed else { throw ConnectionError(.connectionClosed, "the cluster connection was closed") }
        if let connection = state.connections[address] { return connection }
        var node = configuration.node
        node.host = address.host
        node.port = address.port
        node.fallbackAddresses = []
        node.acceptsClusterNode = true
        let connection = try RedisConnection(configuration: node)
        state.connections[address] = connection
        return connection
    }

    /// Each node's connection counters (requests, deadline misses, breaker openings, …), by address: every
    /// node has its own deadlines, reconnects and breaker, so one node's failures show under its address
    /// alone. Connections retired from the map are no longer listed.
    package var nodeStatistics: [RedisConnection.Address: RedisConnection.Statistics] {
        state.withLock { $0.connections }.mapValues(\.statistics)
    }

    /// The nodes' connections in use (not retired), by address.
    var nodeConnectionsByAddress: [RedisConnection.Address: RedisConnection] { state.withLock { $0.connections } }

    /// The addresses whose connection's last command failed (its breaker counts a failure).
    func failingAddresses() -> Set<RedisConnection.Address> {
        let connections = state.withLock { $0.connections }
        return Set(connections.filter { $0.value.breaker.consecutiveFailures > 0 }.keys)
    }

    /// Counts a node's failure to answer a read of the map.
    func noteMapReadFailure() {
        state.withLock { $0.statistics.mapReadFailures += 1 }
    }

    /// The addresses with an open (not retired) connection, for tests.
    var connectedAddresses: Set<RedisConnection.Address> { state.withLock { Set($0.connections.keys) } }

    /// The map generation in use, for tests.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Retired connections still open for the commands on them, for tests.
    var retiredConnectionsInUse: Int { state.withLock { $0.retired.count } }
}

extension ClusterConnection {
    /// A node to send a command to, and the map generation that named it (`nil`: not read from a map, such
    /// as a map read's own node).
    struct Route: Sendable, Hashable {
        var address: RedisConnection.Address
        var generation: UInt64?
    }

    /// A route whose map was replaced by one that no longer names its node; the command is routed again.
    struct StaleRoute: Error {}
}

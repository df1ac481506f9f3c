extension ClusterConnection {
    /// Where the cluster is and how each node is reached.
    ///
    /// Thread safety: a value type; `Sendable`.
    package struct Configuration: Sendable {
        /// Nodes to read the slot map from, any role, tried in order until one answers; the map then names
        /// the rest.
        package var seeds: [RedisConnection.Address]
        /// Credentials, deadlines, TLS and breaker settings for every node's connection; its host, port and
        /// fallback addresses are replaced per node.
        package var node: RedisConnection.Configuration
        /// Redirections (`MOVED`, `ASK`) one operation follows before it fails with the last one. Default 5:
        /// a slot moves at most once per step of a resharding, and a chain longer than that means the map
        /// is changing faster than it can be followed.
        package var maximumRedirects: Int
        /// The time one operation may take, redirections and retries included: no new attempt starts after
        /// it (one in flight still ends by the node's own read deadline). Default: the node's write plus
        /// read deadline, the budget of a single request on a standalone server.
        package var operationTimeout: Duration
        /// The first wait before retrying `TRYAGAIN`, `CLUSTERDOWN` or `LOADING`, doubled after each retry
        /// and never past the operation's deadline. Default 5 ms.
        package var retryDelay: Duration
        /// The shortest time between two reads of the slot map that a redirect or a node's failure starts
        /// (a read the next command cannot do without is never held back). Default 1 s: a failover is
        /// found within about a second of the new primary's promotion, and a resharding that answers
        /// thousands of commands with `MOVED` costs one read a second, not one per redirect.
        package var minimumRefreshInterval: Duration
        /// The age at which the next command starts a read of the map in the background, so a change no
        /// command has run into yet (a node added, a replica promoted by hand) is found. Default 30 s; reads
        /// are counted as ``Statistics/periodicRefreshes``. An idle connection reads nothing.
        package var periodicRefreshInterval: Duration
        /// The time source of the cluster layer: operation deadlines (a batch's included),
        /// ``minimumRefreshInterval`` and ``periodicRefreshInterval``; tests replace it to step past them
        /// without waiting. The waits between retries still sleep on the real clock. Default
        /// `ContinuousClock.now`.
        package var now: @Sendable () -> ContinuousClock.Instant
        /// Called with each map a read put in use (``ClusterConnection/refreshTopology()`` or a read in the
        /// background), on the task that read it, after the map is in use; it must return quickly. The Redis
        /// tier follows the primaries with it (tracking on each). Default `nil`.
        package var onTopology: (@Sendable (ClusterTopology) -> Void)?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - seeds: Nodes to read the slot map from (at least one).
        ///   - node: Settings for each node's connection.
        package init(seeds: [RedisConnection.Address], node: RedisConnection.Configuration) {
            self.seeds = seeds
            self.node = node
            self.maximumRedirects = 5
            self.operationTimeout = node.writeTimeout + node.readTimeout
            self.retryDelay = .milliseconds(5)
            self.minimumRefreshInterval = .seconds(1)
            self.periodicRefreshInterval = .seconds(30)
            self.now = { ContinuousClock.now }
            self.onTopology = nil
        }
    }

    /// Counters of the cluster layer. Thread safety: a value type, read as one snapshot.
    package struct Statistics: Sendable, Equatable {
        /// `MOVED` replies followed.
        package var movedRedirects = 0
        /// `ASK` replies followed.
        package var askRedirects = 0
        /// Retries after `TRYAGAIN`, `CLUSTERDOWN` or `LOADING`.
        package var retries = 0
        /// Slot maps read from a node.
        package var topologyRefreshes = 0
        /// Map reads started in the background by a redirect or a failure (``ClusterConnection/refreshSoon()``).
        package var backgroundRefreshes = 0
        /// Connections retired because a read of the map no longer routed to their node.
        package var retiredConnections = 0
        /// Nodes that failed to answer a read of the map (another node may have answered it).
        package var mapReadFailures = 0
        /// Map reads started because the map in use was older than ``Configuration/periodicRefreshInterval``.
        package var periodicRefreshes = 0

        /// Creates zeroed counters.
        package init() {}
    }
}

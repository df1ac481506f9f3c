/// The Redis tier's own counters, beside its ``RedisCache/statistics``: how its connection fares and
/// what it refused to serve.
///
/// Thread safety: a plain value; `Sendable`. A snapshot taken at one instant.
public struct RedisCacheHealth: Sendable, Hashable {
    /// Successful connects and handshakes, the first included.
    public var connects: Int
    /// Connects after the first (after a lost connection).
    public var reconnects: Int
    /// Times a deadline passed and closed the connection.
    public var deadlineMisses: Int
    /// Times the circuit breaker opened.
    public var breakerOpenings: Int
    /// Operations refused at once while the breaker was open.
    public var rejectedWhileOpen: Int
    /// Whether the breaker of every data connection is open now (operations fail at once with
    /// `CacheError.Code.unavailable`). The counters above are summed over the data connections.
    public var isBreakerOpen: Bool
    /// Values that failed to open (tampered, copied to another key, damaged): each was a miss, reported
    /// to the observer, and left in place.
    public var corruptEntries: Int
    /// Values sealed under an older epoch (before a `removeAll()`), read as misses.
    public var staleEpochEntries: Int
    /// Fences (a `removeAll()`, a tag's removal) that a replica acknowledged within
    /// ``RedisCacheConfiguration/fenceConfirmationTimeout`` (`WAIT`): a failover to that replica keeps them.
    public var confirmedFences: Int
    /// Fences made on a server with replicas that none acknowledged in time: not replicated yet, so a
    /// failover now could undo them (the entries they removed would open again in processes that never saw
    /// the higher counter). Each such fence still took effect on the primary, and the call succeeded.
    public var unconfirmedFences: Int
    /// Whether the tracking connection is up with tracking on, and the tiers above were flushed since it
    /// came up: invalidations reach observers. `false` while nobody observes (see
    /// ``RedisCache/addInvalidationObserver(_:)``) and from a lost connection until tracking is back.
    public var isTracking = false
    /// Times tracking was turned on, on a new tracking connection (the first included).
    public var trackingConnects = 0
    /// Times the tracking connection was lost while tracking was on (each published `.all`).
    public var trackingLosses = 0
    /// Keys published in `.keys` invalidations.
    public var keysInvalidated = 0
    /// `.all` invalidations published (a connect or loss of the tracking connection, a `removeAll()`
    /// anywhere, `FLUSHDB`, an unknown name after the name map overflowed).
    public var fullInvalidations = 0
    /// Whether the configured server turned out to be a node of a Redis Cluster, so that commands go to the
    /// primary of each key's slot (Docs/RedisCache.md, "Redis Cluster"). The connection counters above are then
    /// summed over every node.
    public var isCluster = false
    /// On a cluster: `MOVED` and `ASK` redirections followed.
    public var clusterRedirects = 0
    /// On a cluster: reads of the slot map (the first, and those a redirection, a node's failure or the map's
    /// age started).
    public var topologyRefreshes = 0
    /// On a cluster: flushes of the keys of one node's slots only, published as `.keys` when that node's
    /// tracking connection was lost or came back (a node that serves the namespace's counters flushes
    /// everything instead, counted in ``fullInvalidations``).
    public var scopedInvalidations = 0
    /// On a cluster: each node the tier has a connection to, by address.
    public var nodes: [RedisCacheConfiguration.Address: Node] = [:]

    /// One cluster node's connection, as ``RedisCacheHealth/nodes`` reports it.
    ///
    /// Thread safety: a plain value; `Sendable`.
    public struct Node: Sendable, Hashable {
        /// Successful connects and handshakes to the node, the first included.
        public var connects: Int
        /// Times a deadline passed and closed the node's connection.
        public var deadlineMisses: Int
        /// Times the node's circuit breaker opened.
        public var breakerOpenings: Int
        /// Whether the node's breaker is open now: operations on its slots fail at once, others go on.
        public var isBreakerOpen: Bool
        /// Whether tracking is on on the node (it is listened on while it is a primary and someone observes).
        public var isTracking: Bool

        /// Creates a snapshot of one node.
        public init(
            connects: Int = 0, deadlineMisses: Int = 0, breakerOpenings: Int = 0, isBreakerOpen: Bool = false,
            isTracking: Bool = false
        ) {
            self.connects = connects
            self.deadlineMisses = deadlineMisses
            self.breakerOpenings = breakerOpenings
            self.isBreakerOpen = isBreakerOpen
            self.isTracking = isTracking
        }
    }

    /// Creates a snapshot.
    public init(
        connects: Int = 0, reconnects: Int = 0, deadlineMisses: Int = 0, breakerOpenings: Int = 0,
        rejectedWhileOpen: Int = 0, isBreakerOpen: Bool = false, corruptEntries: Int = 0, staleEpochEntries: Int = 0,
        confirmedFences: Int = 0, unconfirmedFences: Int = 0
    ) {
        self.connects = connects
        self.reconnects = reconnects
        self.deadlineMisses = deadlineMisses
        self.breakerOpenings = breakerOpenings
        self.rejectedWhileOpen = rejectedWhileOpen
        self.isBreakerOpen = isBreakerOpen
        self.corruptEntries = corruptEntries
        self.staleEpochEntries = staleEpochEntries
        self.confirmedFences = confirmedFences
        self.unconfirmedFences = unconfirmedFences
    }
}

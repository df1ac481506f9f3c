import RedisConnection

// A Redis Cluster behind the configured address (Docs/RedisCache.md, "Redis Cluster"): the settings of the
// cluster layer the tier switches to when the server turns out to be a cluster node (ServerRoute).
extension RedisCache {
    /// The cluster layer's settings: seeded with the configured address and its fallbacks (any node of the
    /// cluster, any role), each node reached like the configured server, every map read followed by the
    /// tracking listeners (one per primary).
    static func clusterConfiguration(
        _ configuration: RedisCacheConfiguration, node: RedisConnection.Configuration,
        invalidations: InvalidationHub<Key>
    ) -> ClusterConnection.Configuration {
        let seeds =
            [RedisConnection.Address(host: configuration.host, port: configuration.port)]
            + configuration.fallbackAddresses.map { RedisConnection.Address(host: $0.host, port: $0.port) }
        var cluster = ClusterConnection.Configuration(seeds: seeds, node: node)
        cluster.onTopology = { [weak invalidations] topology in invalidations?.follow(topology) }
        return cluster
    }

    /// Adds the cluster layer's counters and each node's to `health`.
    func addClusterHealth(_ cluster: ClusterConnection, to health: inout RedisCacheHealth) {
        let statistics = cluster.statistics
        let tracking = invalidations.trackingNodes
        health.isCluster = true
        health.clusterRedirects = statistics.movedRedirects + statistics.askRedirects
        health.topologyRefreshes = statistics.topologyRefreshes
        health.scopedInvalidations = invalidations.snapshot.counters.scopedInvalidations
        for (address, node) in cluster.nodeStates {
            health.nodes[RedisCacheConfiguration.Address(host: address.host, port: address.port)] =
                RedisCacheHealth.Node(
                    connects: node.statistics.connects, deadlineMisses: node.statistics.deadlineMisses,
                    breakerOpenings: node.statistics.breakerOpenings, isBreakerOpen: node.isUnavailable,
                    isTracking: tracking.contains(address))
        }
    }
}

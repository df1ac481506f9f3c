import CacheCore
import RedisConnection
import SealedRecord

extension RedisCache: CacheInvalidationSource, InvalidationStartReporting {
    /// Registers `observer` for the changes other clients (and this tier's own writes) make to this
    /// namespace on the server, as reported by Redis client-side caching's tracking messages.
    ///
    /// The first observer opens a dedicated connection running
    /// `CLIENT TRACKING on BCAST PREFIX strata:v2:<namespace>: NOLOOP`; the last one to be cancelled
    /// closes it. `MultiCache` registers one for each Redis tier below another tier.
    ///
    /// - `.keys` for writes and removals of keys this process used recently (read, wrote or removed
    ///   through this instance; at most ``RedisCacheConfiguration/trackedKeyLimit`` names are kept).
    ///   Writes to keys this process never used are not published: it holds no copy of them.
    /// - `.all` once tracking is on (to a later observer: at once, on the registering thread), for
    ///   `removeAll()` by any process (the epoch key), for `FLUSHDB`/`FLUSHALL`, when the tracking
    ///   connection is lost, once it is back, and for an unknown name after the name map overflowed.
    ///
    /// Every write reaches the server's tracking, this process's own included (fills after a miss too):
    /// another process that holds the key above drops its copy, one that does not ignores the message.
    /// A process also receives its own writes back and drops its own fresh copy above; the next read
    /// fetches it again from Redis.
    ///
    /// With ``RedisCacheConfiguration/tracksInvalidations`` off, nothing is ever published.
    ///
    /// - Parameter observer: Called on the tracking connection's thread, one invalidation at a time, in
    ///   the order the server sent them; it must return quickly.
    /// - Returns: The registration; cancel or release it to unregister.
    public func addInvalidationObserver(
        _ observer: @escaping @Sendable (CacheInvalidation<Key>) -> Void
    ) -> CacheInvalidationSubscription {
        guard configuration.tracksInvalidations else { return CacheInvalidationSubscription {} }
        return invalidations.add(observer)
    }

    /// Calls `started` once the tracking connection's first attempt has ended: tracking came on and its `.all`
    /// reached every observer, or the attempt failed (a server down or refusing `HELLO 3`); at once with
    /// ``RedisCacheConfiguration/tracksInvalidations`` off or no observer registered. `MultiCache` holds its
    /// first loads until then, so that the `.all` of tracking coming on does not fence them.
    package func whenInvalidationsStart(_ started: @escaping @Sendable () -> Void) {
        guard configuration.tracksInvalidations else { return started() }
        invalidations.whenStarted(started)
    }

    /// Settings of the tracking connection, from the tier's.
    static func trackingSettings(
        _ configuration: RedisCacheConfiguration, prefix: String, epochKey: [UInt8], tls: TLSContext?
    ) -> TrackingListener.Settings {
        var settings = TrackingListener.Settings(
            host: configuration.host, port: configuration.trackingPort ?? configuration.port,
            username: configuration.username, password: configuration.password,
            connectTimeout: configuration.connectTimeout, readTimeout: configuration.readTimeout,
            writeTimeout: configuration.writeTimeout, keepAliveInterval: configuration.keepAliveInterval,
            breaker: CircuitBreaker(), decoderLimits: RESPDecoder.Limits(maximumBulkLength: 1 << 20),
            prefix: Array(prefix.utf8), fallbackAddresses: configuration.fallbackAddresses)
        settings.tls = tls
        // Created before tracking is on: the first process on a namespace would otherwise take the echo of the
        // epoch's creation for another process's `removeAll()`, and fence every load it had in flight.
        settings.prelude = RESPCommand(arguments: [
            Array("EVAL".utf8), CounterScripts.create, Array("1".utf8), epochKey,
            Array(String(FenceCounter.freshBase()).utf8),
        ])
        return settings
    }
}

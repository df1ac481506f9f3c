import CacheCore

extension RedisCacheConfiguration {
    /// How a load of a key that every process misses at once runs once in the whole fleet: the first process
    /// takes a lease on loading it in Redis; the others wait for its value to land and serve it
    /// (Docs/Loading.md, "Across processes"). A caller whose `LoadOptions.failSafe` can serve a stale entry
    /// does not wait: it serves that entry while the lease is held.
    ///
    /// A lease is efficiency, not correctness: a value a late holder loads is stored only if no removal of the
    /// key happened since its load began (`LoadFencingCache`), whatever the lease says.
    ///
    /// Thread safety: a plain value; `Sendable`.
    public struct LoadLease: Sendable, Hashable {
        /// How long a lease lasts when its holder never gives it up (it died or hung): a waiter takes over
        /// after at most this. Set it above your slowest load: a lease that expires under a live holder lets
        /// a second process load too. Must be positive. Default 10 s.
        public var duration: Duration
        /// The longest a caller waits for another process's load before it loads itself. Must be positive.
        /// Default 10 s. When another waiter takes over the lease of a holder that ended without storing or
        /// died, the wait for the new holder starts afresh (at most three times), so one dead holder costs one
        /// more load in the fleet, not one per waiter.
        public var maximumWait: Duration
        /// How often a waiter looks for the value without a tracking push (the fallback when tracking is off
        /// or a push is lost). Must be positive. Default 100 ms.
        public var pollInterval: Duration

        /// A lease policy.
        ///
        /// - Parameters:
        ///   - duration: How long an unreleased lease lasts.
        ///   - maximumWait: The longest wait for another process's load.
        ///   - pollInterval: The time between looks without a push.
        public init(
            duration: Duration = .seconds(10), maximumWait: Duration = .seconds(10),
            pollInterval: Duration = .milliseconds(100)
        ) {
            self.duration = duration
            self.maximumWait = maximumWait
            self.pollInterval = pollInterval
        }

        /// Checks that every duration is positive.
        ///
        /// - Throws: `CacheError` `.invalidArgument` naming the setting.
        func validate() throws(CacheError) {
            for (name, value) in [("duration", duration), ("maximumWait", maximumWait), ("pollInterval", pollInterval)]
            where value <= .zero {
                throw CacheError(.invalidArgument, "loadLease.\(name) must be positive")
            }
        }
    }
}

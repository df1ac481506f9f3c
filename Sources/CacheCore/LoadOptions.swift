import Foundation

/// What a load-once call may do around its loader: serve an expired value when the loader fails
/// (fail-safe), serve it while a background refresh runs (stale-while-revalidate), refresh a value before
/// it expires (refresh-ahead), and stop waiting for a slow loader (soft and hard timeouts).
///
/// Every behaviour is off by default, so `LoadOptions()` is the plain load-once. Pass the options as
/// `options:` to the load-once call of a `MultiCache`, a `MemoryCache` or a `DiskCache`:
///
/// ```swift
/// let options = LoadOptions(
///     failSafe: .init(maximumStaleness: .seconds(3_600), throttle: .seconds(30)),
///     staleWhileRevalidate: .seconds(60),
///     refreshAhead: 0.8,
///     softTimeout: .milliseconds(200), hardTimeout: .seconds(2))
/// let price = try await prices.value(forKey: sku, expiry: .seconds(300), options: options) {
///     try await backend.price(of: sku)
/// }
/// ```
///
/// Expiry stays absolute: a served stale value is never made fresh again, and a plain read
/// (`value(forKey:)`) never returns an expired value whatever options earlier loads used. An entry
/// stored by a load with options is kept past its expiry for the longest of ``FailSafe/maximumStaleness``
/// and ``staleWhileRevalidate`` (its `CacheEntry/staleUntil`), and no longer. Docs/Loading.md draws a
/// timeline of each behaviour.
///
/// A plain value; `Sendable` and thread-safe.
public struct LoadOptions: Sendable, Hashable {
    /// Serve an expired value when the loader fails, for a bounded time.
    ///
    /// When the loader throws (or the hard timeout passes) and the cache still holds an entry that
    /// expired less than ``maximumStaleness`` ago, the call returns that entry's value instead of the
    /// error. The failure is remembered for ``throttle``: during it, calls with fail-safe that find such
    /// an entry return it without running the loader, so a failing backend sees one loader call per
    /// throttle period however many callers there are. A write or removal of the key ends the throttle.
    public struct FailSafe: Sendable, Hashable {
        /// How long after its expiry an entry may still be served when the loader fails; positive.
        public var maximumStaleness: Duration
        /// How long after a failed load calls serve the stale entry without loading again; zero or more.
        public var throttle: Duration

        /// Creates a fail-safe setting.
        ///
        /// - Parameters:
        ///   - maximumStaleness: How long past its expiry an entry may be served; must be positive.
        ///   - throttle: How long a failure is remembered; must not be negative. Thirty seconds by default.
        public init(maximumStaleness: Duration, throttle: Duration = .seconds(30)) {
            self.maximumStaleness = maximumStaleness
            self.throttle = throttle
        }
    }

    /// Fail-safe, or `nil` (the default) to let loader errors through.
    public var failSafe: FailSafe?
    /// A grace period after expiry in which the expired value is returned at once while one background
    /// refresh (however many callers) loads the new one; `nil` (the default) for none.
    public var staleWhileRevalidate: Duration?
    /// A fraction of the lifetime (in `0 < f < 1`) after which a fresh hit starts one background refresh and
    /// returns the current value; `nil` (the default) for none.
    ///
    /// The lifetime is the call's relative expiry (`.after(d)`, or the tier's default expiry when that is
    /// relative): with `expiry: .seconds(600)` and `0.8`, a hit in the last two minutes refreshes. A call
    /// whose expiry is absolute or `.never` has no lifetime to take a fraction of, and does not refresh
    /// ahead.
    public var refreshAhead: Double?
    /// How long a caller waits for the loader before it takes the stale value, if the cache still holds
    /// one (the load goes on in the background and stores its value when it arrives); `nil` for none.
    /// Without a stale value the caller keeps waiting, up to ``hardTimeout``.
    public var softTimeout: Duration?
    /// How long a caller waits for the loader at most: then the call throws
    /// ``CacheError/Code/loadTimedOut`` (or serves a stale value under ``failSafe``), while the load goes on
    /// and stores its value when it arrives, unless a write or removal fenced it; `nil` for none.
    public var hardTimeout: Duration?

    /// Creates load options; every behaviour is off unless given.
    ///
    /// - Parameters:
    ///   - failSafe: Serve an expired value when the loader fails.
    ///   - staleWhileRevalidate: Grace period after expiry, served while a background refresh runs; positive.
    ///   - refreshAhead: Fraction of the lifetime after which a hit refreshes in the background; in (0, 1).
    ///   - softTimeout: Wait for the loader at most this long when a stale value is at hand; positive, and
    ///     shorter than `hardTimeout` when both are given.
    ///   - hardTimeout: Wait for the loader at most this long; positive.
    public init(
        failSafe: FailSafe? = nil,
        staleWhileRevalidate: Duration? = nil,
        refreshAhead: Double? = nil,
        softTimeout: Duration? = nil,
        hardTimeout: Duration? = nil
    ) {
        self.failSafe = failSafe
        self.staleWhileRevalidate = staleWhileRevalidate
        self.refreshAhead = refreshAhead
        self.softTimeout = softTimeout
        self.hardTimeout = hardTimeout
    }

    /// How long past its expiry an entry stored with these options is kept (the longest grace they name),
    /// or `nil` when none serves a stale value.
    public var staleRetention: Duration? {
        let graces = [failSafe?.maximumStaleness, staleWhileRevalidate].compactMap { $0 }
        return graces.max()
    }

    /// Whether every behaviour is off.
    package var isPlain: Bool { self == LoadOptions() }

    /// The `CacheEntry/staleUntil` of an entry stored with these options that expires at `expiresAt`.
    package func staleUntil(expiringAt expiresAt: Date?) -> Date? {
        guard let expiresAt, let retention = staleRetention else { return nil }
        return expiresAt.addingTimeInterval(retention.timeInterval)
    }

    /// Whether every value is in range (what ``validate()`` checks, without building an error); inlinable,
    /// so that a cache's fast path checks it without a call.
    @inlinable
    package var isValid: Bool {
        if let failSafe, failSafe.maximumStaleness <= .zero || failSafe.throttle < .zero { return false }
        if let staleWhileRevalidate, staleWhileRevalidate <= .zero { return false }
        if let softTimeout, softTimeout <= .zero { return false }
        if let hardTimeout, hardTimeout <= .zero { return false }
        if let softTimeout, let hardTimeout, softTimeout >= hardTimeout { return false }
        if let refreshAhead, !(refreshAhead > 0 && refreshAhead < 1) { return false }
        return true
    }

    /// Checks the options' ranges.
    ///
    /// - Throws: ``CacheError/Code/invalidArgument`` naming the first value out of range.
    package func validate() throws {
        func positive(_ duration: Duration?, _ name: String) throws {
            if let duration, duration <= .zero {
                throw CacheError(.invalidArgument, "LoadOptions.\(name) is \(duration); it must be positive")
            }
        }
        try positive(failSafe?.maximumStaleness, "failSafe.maximumStaleness")
        if let throttle = failSafe?.throttle, throttle < .zero {
            throw CacheError(.invalidArgument, "LoadOptions.failSafe.throttle is \(throttle); it must not be negative")
        }
        try positive(staleWhileRevalidate, "staleWhileRevalidate")
        try positive(softTimeout, "softTimeout")
        try positive(hardTimeout, "hardTimeout")
        // A soft timeout at or past the hard one could never serve the stale value it exists for.
        if let softTimeout, let hardTimeout, softTimeout >= hardTimeout {
            throw CacheError(
                .invalidArgument,
                "LoadOptions.softTimeout is \(softTimeout); it must be shorter than hardTimeout (\(hardTimeout))")
        }
        if let fraction = refreshAhead, !(fraction > 0 && fraction < 1) {
            throw CacheError(.invalidArgument, "LoadOptions.refreshAhead is \(fraction); it must lie in (0, 1)")
        }
    }
}

extension Expiry {
    /// The lifetime of an entry written with this expiry, in seconds, when it is relative; `nil` for
    /// `.never` and an absolute instant (refresh-ahead takes a fraction of it).
    package var relativeLifetime: TimeInterval? {
        if case .after(let duration) = self { return duration.timeInterval }
        return nil
    }
}

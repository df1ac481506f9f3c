#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
    public var failSafe: FailSafe? { didSet { checkRanges() } }
    /// A grace period after expiry in which the expired value is returned at once while one background
    /// refresh (however many callers) loads the new one; `nil` (the default) for none.
    public var staleWhileRevalidate: Duration? { didSet { checkRanges() } }
    /// A fraction of the lifetime (in `0 < f < 1`) after which a fresh hit starts one background refresh and
    /// returns the current value; `nil` (the default) for none.
    ///
    /// The lifetime is the call's relative expiry (`.after(d)`, or the tier's default expiry when that is
    /// relative): with `expiry: .seconds(600)` and `0.8`, a hit in the last two minutes refreshes. A call
    /// whose expiry is absolute or `.never` has no lifetime to take a fraction of, and does not refresh
    /// ahead.
    public var refreshAhead: Double? { didSet { checkRanges() } }
    /// How long a caller waits for the loader before it takes the stale value, if the cache still holds
    /// one (the load goes on in the background and stores its value when it arrives); `nil` for none.
    /// Without a stale value the caller keeps waiting, up to ``hardTimeout``.
    public var softTimeout: Duration? { didSet { checkRanges() } }
    /// How long a caller waits for the loader at most: then the call throws
    /// ``CacheError/Code/loadTimedOut`` (or serves a stale value under ``failSafe``), while the load goes on
    /// and stores its value when it arrives, unless a write or removal fenced it; `nil` for none.
    public var hardTimeout: Duration? { didSet { checkRanges() } }

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
        checkRanges()
    }

    /// Whether every value is in range, kept up to date by every change, so that a load's fast path (a
    /// fresh hit) checks the options with one load rather than a dozen `Duration` comparisons, which are
    /// calls into the standard library. Derived from the other properties, so it never makes two equal
    /// options unequal.
    @usableFromInline package private(set) var isValid = true

    private mutating func checkRanges() {
        isValid = rangeError() == nil
    }

    /// How long past its expiry an entry stored with these options is kept (the longest grace they name),
    /// or `nil` when none serves a stale value.
    public var staleRetention: Duration? {
        // No array: every store of a loaded value asks, and an allocation there showed in its cost.
        guard let failSafe else { return staleWhileRevalidate }
        guard let staleWhileRevalidate else { return failSafe.maximumStaleness }
        return max(failSafe.maximumStaleness, staleWhileRevalidate)
    }

    /// Whether every behaviour is off: a load with these options is a plain load-once, which never reads a
    /// stale entry. Inlinable, so that a load's fast path checks it without a call.
    @inlinable
    package var hasNoBehaviour: Bool {
        failSafe == nil && staleWhileRevalidate == nil && refreshAhead == nil && softTimeout == nil
            && hardTimeout == nil
    }

    /// The `CacheEntry/staleUntil` of an entry stored with these options that expires at `expiresAt`.
    package func staleUntil(expiringAt expiresAt: Date?) -> Date? {
        guard let expiresAt, let retention = staleRetention else { return nil }
        return expiresAt.addingTimeInterval(retention.timeInterval)
    }

    /// Checks the options' ranges.
    ///
    /// - Throws: ``CacheError/Code/invalidArgument`` naming the first value out of range.
    @inlinable
    package func validate() throws {
        if !isValid, let error = rangeError() { throw error }
    }

    /// The error naming the first value out of range, or `nil` when every value is in range: the one
    /// implementation of the options' rules.
    @usableFromInline
    func rangeError() -> CacheError? {
        func notPositive(_ duration: Duration?, _ name: String) -> CacheError? {
            guard let duration, duration <= .zero else { return nil }
            return CacheError(.invalidArgument, "LoadOptions.\(name) is \(duration); it must be positive")
        }
        if let error = notPositive(failSafe?.maximumStaleness, "failSafe.maximumStaleness") { return error }
        if let throttle = failSafe?.throttle, throttle < .zero {
            return CacheError(.invalidArgument, "LoadOptions.failSafe.throttle is \(throttle); it must not be negative")
        }
        if let error = notPositive(staleWhileRevalidate, "staleWhileRevalidate") { return error }
        if let error = notPositive(softTimeout, "softTimeout") { return error }
        if let error = notPositive(hardTimeout, "hardTimeout") { return error }
        // A soft timeout at or past the hard one could never serve the stale value it exists for.
        if let softTimeout, let hardTimeout, softTimeout >= hardTimeout {
            return CacheError(
                .invalidArgument,
                "LoadOptions.softTimeout is \(softTimeout); it must be shorter than hardTimeout (\(hardTimeout))")
        }
        if let fraction = refreshAhead, !(fraction > 0 && fraction < 1) {
            return CacheError(.invalidArgument, "LoadOptions.refreshAhead is \(fraction); it must lie in (0, 1)")
        }
        return nil
    }

    /// Whether a fast path must leave a fresh entry to the coordinator for refresh-ahead: when it is due, or
    /// when the call's expiry is the tier's default (`nil`), which only the coordinator knows.
    @inlinable
    package func mayBeRefreshAheadDue(expiresAt: TimeInterval, now: TimeInterval, expiry: Expiry?) -> Bool {
        // The tier's default expiry (`nil`) is judged by the coordinator, which knows the default.
        guard let expiry else { return refreshAhead != nil }
        return isRefreshAheadDue(expiresAt: expiresAt, now: now, expiry: expiry)
    }

    /// Whether refresh-ahead wants a fresh entry refreshed now: the one implementation of the rule, for the
    /// fast paths and the coordinator alike.
    ///
    /// - Parameters:
    ///   - expiresAt: The entry's expiry in seconds since the reference date; `.infinity` for never.
    ///   - now: The clock reading the entry was found fresh at, in the same seconds.
    ///   - expiry: The loaded value's expiry: refresh-ahead takes its fraction of a relative one.
    @inlinable
    package func isRefreshAheadDue(expiresAt: TimeInterval, now: TimeInterval, expiry: Expiry) -> Bool {
        guard let refreshAhead, expiresAt != .infinity, case .after(let lifetime) = expiry else { return false }
        return expiresAt - now <= lifetime.approximateTimeInterval * (1 - refreshAhead)
    }
}

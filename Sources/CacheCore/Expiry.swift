#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// When a stored entry expires.
///
/// A relative expiry is turned into an absolute instant once, when the entry is written, using the
/// cache's clock; reads never extend it.
///
/// ```swift
/// try await cache.setValue(data, forKey: "avatar", expiry: .seconds(600))
/// ```
///
/// Thread safety: a plain value; `Sendable`. Every member is O(1).
public enum Expiry: Sendable, Hashable {
    /// The entry never expires (it can still be evicted by a limit).
    case never
    /// The entry expires this long after it is written. A zero or negative duration makes the entry
    /// already expired when written: it is not stored, and it removes the earlier entry for its key.
    case after(Duration)
    /// The entry expires at this wall-clock instant; an instant already past when the entry is written
    /// behaves like a zero ``after(_:)``.
    case at(Date)

    /// An expiry `seconds` after the write, rounded to the nanosecond.
    ///
    /// A time to live beyond what 64-bit nanoseconds hold (about 292 years), including `.infinity`, is
    /// ``never``; a negative one is already expired when written, and so is a `.nan`, rather than a
    /// value that stays forever by mistake.
    ///
    /// - Parameter seconds: The time to live, in seconds.
    /// - Returns: The relative expiry.
    @inlinable
    public static func seconds(_ seconds: Double) -> Expiry {
        // Inlinable (with its three siblings): a call site's constant TTL, passed on every read with
        // `LoadOptions`, then folds to a constant instead of a cross-module call per operation.
        let nanoseconds = (seconds * 1e9).rounded()
        // Int64(_:) traps outside its range and on NaN; bad input must not crash the process.
        guard abs(nanoseconds) < 9.2e18 else { return seconds > 0 ? .never : .after(.zero) }
        return .after(.nanoseconds(Int64(nanoseconds)))
    }

    /// An expiry `minutes` after the write; `.minutes(10)` is `.seconds(600)`.
    ///
    /// - Parameter minutes: The time to live, in minutes. Out-of-range and negative values behave as in
    ///   ``seconds(_:)``.
    /// - Returns: The relative expiry.
    @inlinable
    public static func minutes(_ minutes: Double) -> Expiry { .seconds(minutes * 60) }

    /// An expiry `hours` after the write; `.hours(2)` is `.seconds(7_200)`.
    ///
    /// - Parameter hours: The time to live, in hours. Out-of-range and negative values behave as in
    ///   ``seconds(_:)``.
    /// - Returns: The relative expiry.
    @inlinable
    public static func hours(_ hours: Double) -> Expiry { .seconds(hours * 3_600) }

    /// An expiry `days` after the write, counted as 86,400-second days on the cache's clock (a daylight
    /// saving change does not shorten or lengthen one).
    ///
    /// - Parameter days: The time to live, in days. Out-of-range and negative values behave as in
    ///   ``seconds(_:)``.
    /// - Returns: The relative expiry.
    @inlinable
    public static func days(_ days: Double) -> Expiry { .seconds(days * 86_400) }

    /// The absolute expiry instant for an entry written at `now`.
    ///
    /// - Parameter now: The write time on the cache's clock.
    /// - Returns: The expiry instant, or `nil` for ``never``. For ``after(_:)`` it is `now` plus the
    ///   duration in seconds, as a `TimeInterval` (sub-microsecond parts of a far-future instant may
    ///   round).
    public func expirationDate(from now: Date) -> Date? {
        switch self {
        case .never:
            return nil
        case .after(let duration):
            return now.addingTimeInterval(duration.timeInterval)
        case .at(let date):
            return date
        }
    }

    /// The earlier of two expiry instants, where `nil` means never.
    ///
    /// - Parameters:
    ///   - lhs: An expiry instant or `nil`.
    ///   - rhs: Another expiry instant or `nil`.
    /// - Returns: Whichever comes first; `nil` only when both are `nil`.
    public static func earliest(_ lhs: Date?, _ rhs: Date?) -> Date? {
        switch (lhs, rhs) {
        case (nil, nil): return nil
        case (let date?, nil), (nil, let date?): return date
        case (let left?, let right?): return min(left, right)
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    ///
    /// The seconds and the attoseconds are converted separately and added, so the result is as exact as
    /// a `Double` allows; a negative duration gives a negative interval.
    public var timeInterval: TimeInterval {
        let parts = components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }

    /// The duration in seconds, within a few units in the last place of ``timeInterval``, computed inline
    /// from the 128-bit count of attoseconds: the standard library's `components`, which ``timeInterval``
    /// uses, is an opaque call that divides a 128-bit integer, as long as the rest of a cache hit with
    /// refresh-ahead on.
    @inlinable
    package var approximateTimeInterval: TimeInterval {
        // `_high` and `_low` are the frozen (ABI-stable) two's-complement halves of the attosecond count.
        (TimeInterval(_high) * 0x1p64 + TimeInterval(_low)) / 1e18
    }
}

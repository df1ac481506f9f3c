import CacheCore
import Foundation

/// A clock that moves only when told to, so tests check expiry without sleeping.
///
/// ```swift
/// let clock = ManualClock()
/// let cache = try MemoryCache<String, Int>(clock: clock)
/// cache.setValue(1, forKey: "a", expiry: .seconds(10))
/// clock.advance(by: 10)
/// #expect(cache.value(forKey: "a") == nil)
/// ```
///
/// Thread-safe: `now`, `set(to:)` and `advance(by:)` may be called from any thread; each takes one
/// small lock and is O(1). Moving the clock does not wake anything: a cache sees the new time on its
/// next read of ``now``.
public final class ManualClock: CacheClock {
    private let current: Locked<Date>

    /// The instant a clock reads when created without a `start`: 2026-01-01 00:00:00 UTC.
    ///
    /// A whole second, so offsets such as `defaultStart + 10` are exact in every instant encoding a
    /// tier may use (seconds as `Double`, milliseconds, nanoseconds).
    public static let defaultStart = Date(timeIntervalSince1970: 1_767_225_600)

    /// Creates a clock that reads `start`.
    ///
    /// - Parameter start: The initial time; ``defaultStart`` by default, so tests do not depend on the
    ///   real date.
    public init(start: Date = ManualClock.defaultStart) {
        current = Locked(start)
    }

    /// The clock's current time.
    public var now: Date { current.value }

    /// Moves the clock forward (or backward, with a negative value) by `seconds`.
    ///
    /// - Parameter seconds: The change, in seconds (fractions allowed).
    public func advance(by seconds: TimeInterval) {
        current.withLock { $0 = $0.addingTimeInterval(seconds) }
    }

    /// Moves the clock forward (or backward) by `duration`.
    ///
    /// - Parameter duration: The change, converted to seconds as a `TimeInterval`.
    public func advance(by duration: Duration) {
        advance(by: duration.timeInterval)
    }

    /// Sets the clock to `date`, which may be earlier than now.
    ///
    /// - Parameter date: The new time.
    public func set(to date: Date) {
        current.withLock { $0 = date }
    }
}

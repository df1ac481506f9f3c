#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A source of the current wall-clock time, injected into every cache that looks at time.
///
/// Expiry is kept as wall-clock `Date` instants because the disk tier must honour them after a
/// restart. A wall clock can jump; each tier documents what a jump does (a jump forward expires
/// entries early, a jump backward never revives one that was already removed).
///
/// Tests use `ManualClock` from `CacheTesting` to move time without sleeping.
///
/// - Important: Conformers must be safe to call from any thread, and reading ``now`` should be O(1):
///   caches read it on every expiring read and write.
public protocol CacheClock: Sendable {
    /// The current time.
    var now: Date { get }

    /// Suspends until ``now`` reaches `deadline`; used for the loader timeouts of `LoadOptions`.
    ///
    /// The default sleeps for the wall-clock time left (`Task.sleep`), which suits a clock that follows
    /// real time; a test clock (`ManualClock`) wakes its sleepers when it is moved instead.
    ///
    /// - Parameter deadline: The instant to wake at; one already past returns at once.
    /// - Throws: `CancellationError` when the sleeping task is cancelled.
    func sleep(until deadline: Date) async throws
}

extension CacheClock {
    /// Sleeps for the wall-clock time between ``now`` and `deadline`.
    ///
    /// - Parameter deadline: The instant to wake at.
    /// - Throws: `CancellationError` when the sleeping task is cancelled.
    public func sleep(until deadline: Date) async throws {
        let seconds = deadline.timeIntervalSince(now)
        guard seconds > 0 else { return try Task.checkCancellation() }
        try await Task.sleep(nanoseconds: UInt64(min(seconds, 1e9) * 1e9))
    }
}

/// The system's wall clock (`Date()`).
///
/// Thread-safe; reading it is O(1).
public struct SystemClock: CacheClock {
    /// Creates the system clock.
    public init() {}

    /// The current system time.
    public var now: Date { Date() }
}

extension CacheClock where Self == SystemClock {
    /// The system's wall clock, for `clock: .system` at call sites.
    public static var system: SystemClock { SystemClock() }
}

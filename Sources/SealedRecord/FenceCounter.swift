#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one rule for the counters that fence sealed records — tag versions in every sealing tier, the Redis
/// tier's namespace epoch — so that a counter that is lost can never count through a value a record was
/// stamped with again.
///
/// A record is live only while the counters it was stamped with still hold the stamped values. A counter
/// stored outside the process can be lost: Redis evicts its key under `allkeys-lru` or someone deletes it; the
/// disk store's `tags/` folder is deleted or damaged. A counter that then started again at 0 and counted up
/// by one would, after as many increments as before, reach the values old records carry, and records removed
/// long ago would be served again. So:
///
/// 1. **A missing counter matches no stamp.** A reader that finds no counter treats every record stamped with
///    it as fenced (a tag) or of another epoch; it never reads "missing" as a number.
/// 2. **A stamp is taken only from a counter that exists.** A writer that needs a counter and finds none
///    creates it at a fresh base (atomically: if another writer or a removal created it first, theirs is
///    used), then stamps with what the counter holds.
/// 3. **Advancing a missing counter creates it at a fresh base**; advancing one that exists adds one.
/// 4. **A fresh base is random** in ``baseRange``: 61 random bits above 2^62. Builds before this rule started
///    counters at 0 and counted by one, so none of their values is that high; two fresh bases meet (or one
///    runs into the other's increments) with a probability of about *n* · 2^-61 for *n* increments.
///
/// Entries written while a counter was missing are therefore stamped with the counter they created and live
/// until the next advance; records stamped under the former scheme with a counter that is missing now are
/// misses (never wrong values), and those whose counter still exists keep their stamps' meaning.
///
/// Thread safety: stateless functions; ``freshBase()`` reads the system's random number generator, which is
/// safe from any thread.
package enum FenceCounter {
    /// Where fresh bases are drawn from: 2^62 ..< 2^62 + 2^61. The upper bound leaves 2^61 increments below
    /// 2^63 − 1, the largest value Redis's `INCR` reaches (a signed 64-bit integer).
    package static let baseRange: Range<UInt64> = (1 << 62)..<((1 << 62) + (1 << 61))

    /// A version no counter ever holds, for a stamp that must never be current again (a tag block written
    /// before tag names were canonical, ``TagBlock/decode(_:)``): fresh bases stay below 2^62 + 2^61 and
    /// counters only add one, so nothing reaches 2^64 − 1.
    package static let neverCurrent: UInt64 = .max

    /// A fresh base from the system's random number generator (`getrandom` on Linux, `arc4random` on Apple
    /// platforms).
    ///
    /// - Returns: A value in ``baseRange``.
    package static func freshBase() -> UInt64 {
        var generator = SystemRandomNumberGenerator()
        return freshBase(using: &generator)
    }

    /// A fresh base from `generator`.
    ///
    /// - Parameter generator: The source of randomness; tests pass a seeded one.
    /// - Returns: A value in ``baseRange``.
    package static func freshBase(using generator: inout some RandomNumberGenerator) -> UInt64 {
        UInt64.random(in: baseRange, using: &generator)
    }

    /// The value a counter takes when it is advanced from `current` (`nil`: missing or unreadable): one more,
    /// or a fresh base.
    ///
    /// - Parameter current: The counter's value, or `nil` when there is none to trust.
    /// - Returns: `current + 1`, or ``freshBase()``.
    package static func advanced(from current: UInt64?) -> UInt64 {
        guard let current else { return freshBase() }
        return current &+ 1
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a sealed record says about its own life: the key epoch it was sealed under, its expiry, how long
/// past the expiry it may still be served stale, and the versions its tags were stamped with. Every tier
/// that seals records reads these from its own layout (DiskCache's 52-byte header, RedisCache's envelope
/// header, the tag block inside the ciphertext) and asks ``liveness(currentEpoch:currentTagVersions:at:)``
/// what the record is: one rule for every tier (Docs/Overview.md, "The sealed-record kernel").
///
/// Thread safety: a value type.
package struct RecordStamp: Sendable, Equatable {
    /// The key epoch the record was sealed under.
    package var epoch: UInt64
    /// The instant from which the record is expired, or `nil` when it never expires.
    package var expiresAt: Date?
    /// Until when an expired record may still be served to a load that accepts stale values, or `nil`.
    /// Meaningful only after ``expiresAt``.
    package var staleUntil: Date?
    /// Each tag the record carries and the version it was stamped with; empty for an untagged record, and
    /// for one whose tag block has not been opened yet (a header-only judgement, which cannot fence).
    package var tagVersions: [String: UInt64]

    /// A stamp.
    ///
    /// - Parameters:
    ///   - epoch: The key epoch the record was sealed under.
    ///   - expiresAt: The expiry instant, or `nil`.
    ///   - staleUntil: The end of the stale window, or `nil`.
    ///   - tagVersions: The stamped tag versions; empty when there are none or they are not known yet.
    package init(epoch: UInt64, expiresAt: Date?, staleUntil: Date?, tagVersions: [String: UInt64] = [:]) {
        self.epoch = epoch
        self.expiresAt = expiresAt
        self.staleUntil = staleUntil
        self.tagVersions = tagVersions
    }
}

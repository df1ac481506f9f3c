#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What a sealed record is at one instant, judged by ``RecordStamp/liveness(currentEpoch:currentTagVersions:at:)``.
///
/// The cases are in the order the rule tests them: a record of another epoch is gone whatever else it
/// says, a fenced one is gone even inside its stale window, and only then does time decide.
///
/// Thread safety: a value type.
package enum RecordLiveness: Sendable, Equatable, CaseIterable {
    /// Before its expiry (or without one), every stamped tag current: served.
    case live
    /// At or after its expiry but before its stale-until instant: served only to a load that accepts a
    /// stale value (fail-safe, stale-while-revalidate), a miss for a plain read; kept in place.
    case servableStale
    /// At or after its expiry and past any stale window: a miss, to be removed (counted as an expiration).
    case expired
    /// A tag it carries was removed since it was stamped (its version moved on): a miss for every read,
    /// stale ones included.
    case fencedByTag
    /// Sealed under another key epoch than the current one (a `removeAll()` since, or not yet seen), or the
    /// epoch counter is missing (FenceCounter): a miss.
    case wrongEpoch
}

extension RecordStamp {
    /// The one liveness rule of every sealing tier.
    ///
    /// In order: a record of an epoch other than `currentEpoch` (or any record, when `currentEpoch` is `nil`)
    /// is ``RecordLiveness/wrongEpoch``; one with a
    /// stamped tag whose version differs from `currentTagVersions` is ``RecordLiveness/fencedByTag``; one
    /// whose expiry is at or before `now` is ``RecordLiveness/servableStale`` while `now` is before its
    /// stale-until instant and ``RecordLiveness/expired`` after; anything else is ``RecordLiveness/live``.
    /// An entry is live only while `now < expiresAt`: at its expiry instant it is no longer served.
    ///
    /// Tiers may call this with what they know so far — the header alone, before decrypting (no tag
    /// versions yet, so nothing can be fenced) — and again once the tag block is open.
    ///
    /// - Parameters:
    ///   - currentEpoch: The tier's current key epoch, or `nil` when its counter is missing (lost, or not
    ///     created yet), which matches no record (FenceCounter's rule).
    ///   - currentTagVersions: The current version of every stamped tag (a tag missing here counts as
    ///     moved on, so a tier that could not read a counter, or found none, never serves the record).
    ///   - now: The tier's clock reading.
    /// - Returns: The verdict.
    /// - Complexity: O(*t*) in the number of stamped tags.
    package func liveness(
        currentEpoch: UInt64?, currentTagVersions: [String: UInt64], at now: Date
    ) -> RecordLiveness {
        guard let currentEpoch, epoch == currentEpoch else { return .wrongEpoch }
        guard Self.tagsAreCurrent(tagVersions, in: currentTagVersions) else { return .fencedByTag }
        guard let expiresAt, now >= expiresAt else { return .live }
        if let staleUntil, now < staleUntil { return .servableStale }
        return .expired
    }

    /// The tag-fence rule on its own: whether every version in `stamped` is still the current one in
    /// `current` (counters only go up, so any difference means the tag was removed since the stamp).
    ///
    /// - Parameters:
    ///   - stamped: Tags and the versions they were stamped with.
    ///   - current: The tags' current versions; a tag absent here is not current.
    /// - Returns: `true` when no stamped tag was removed since.
    /// - Complexity: O(*t*) in the number of stamped tags.
    package static func tagsAreCurrent(_ stamped: [String: UInt64], in current: [String: UInt64]) -> Bool {
        stamped.allSatisfy { current[$0.key] == $0.value }
    }
}

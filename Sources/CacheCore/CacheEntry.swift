#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A cached value together with the metadata that must travel with it between tiers.
///
/// The expiry is an absolute wall-clock instant, fixed once when the entry is first written, so a copy
/// written back into a faster tier keeps its remaining lifetime instead of starting a fresh one.
///
/// Thread safety: a plain value; `Sendable` when `Value` is. Every member is O(1).
public struct CacheEntry<Value> {
    /// The cached value.
    public var value: Value
    /// The instant at which the entry expires, or `nil` for an entry that never expires.
    ///
    /// The entry is live while the cache's clock reads strictly earlier than this instant.
    public var expiresAt: Date?
    /// The entry's cost for cost limits (units are the caller's: bytes, pixels, 1 per entry), or `nil`
    /// to let the receiving tier compute it with its own cost function.
    public var cost: Int?
    /// The instant until which a tier keeps the entry after ``expiresAt`` so that a load with
    /// `LoadOptions` may still serve it stale (fail-safe, stale-while-revalidate, a soft timeout), or `nil`
    /// for an entry that is gone at ``expiresAt``.
    ///
    /// A plain read (`entry(forKey:)`, `value(forKey:)`) never returns the entry from ``expiresAt`` on,
    /// whatever this says; only a `StaleRetainingCache`'s `entryIncludingStale(forKey:)` does. A value
    /// earlier than ``expiresAt`` means the same as `nil`.
    public var staleUntil: Date?
    /// The tags the entry carries: `removeAll(taggedWith:)` with any of them makes the entry a miss in
    /// every tier that stored it (Docs/Tags.md). Empty for an untagged entry.
    ///
    /// A tier stamps each tag with its own version counter when it stores the entry; the stamps are the
    /// tier's business and never travel between tiers. Any string is a tag, the empty one included; the
    /// tiers that seal records (disk, Redis) refuse a tag over 65,535 bytes of UTF-8, or more than 65,535
    /// tags, with `.invalidArgument` (Docs/Tags.md, "The tag rule").
    public var tags: Set<String>

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - value: The value to cache.
    ///   - expiresAt: The absolute expiry instant, or `nil` for no expiry.
    ///   - cost: The entry's cost, or `nil` to let each tier compute it.
    ///   - staleUntil: How long a tier keeps the entry past `expiresAt` for loads that may serve it stale,
    ///     or `nil` (the default) for no stale retention.
    ///   - tags: The entry's tags; none by default.
    public init(
        value: Value, expiresAt: Date? = nil, cost: Int? = nil, staleUntil: Date? = nil, tags: Set<String> = []
    ) {
        self.value = value
        self.expiresAt = expiresAt
        self.cost = cost
        self.staleUntil = staleUntil
        self.tags = tags
    }

    /// The instant from which no tier keeps the entry: the later of ``expiresAt`` and ``staleUntil``, or
    /// `nil` for an entry that never expires.
    public var retainedUntil: Date? {
        guard let expiresAt else { return nil }
        guard let staleUntil, staleUntil > expiresAt else { return expiresAt }
        return staleUntil
    }

    /// Whether a tier still keeps the entry at `now` (it is fresh, or stale before ``staleUntil``).
    ///
    /// - Parameter now: The current time on the cache's clock.
    /// - Returns: `true` while `now` is strictly earlier than ``retainedUntil``.
    public func isRetained(at now: Date) -> Bool {
        guard let retainedUntil else { return true }
        return now < retainedUntil
    }

    /// Whether the entry has expired at `now`.
    ///
    /// - Parameter now: The current time on the cache's clock.
    /// - Returns: `true` when `now` is at or past ``expiresAt``; `false` when ``expiresAt`` is `nil`.
    public func isExpired(at now: Date) -> Bool {
        guard let expiresAt else { return false }
        return now >= expiresAt
    }

    /// The time left before expiry at `now`, in seconds, or `nil` for an entry that never expires.
    ///
    /// - Parameter now: The current time on the cache's clock.
    /// - Returns: The remaining lifetime in seconds; zero or negative once expired.
    public func remainingLifetime(at now: Date) -> TimeInterval? {
        expiresAt.map { $0.timeIntervalSince(now) }
    }
}

extension CacheEntry: Sendable where Value: Sendable {}
extension CacheEntry: Equatable where Value: Equatable {}
extension CacheEntry: Hashable where Value: Hashable {}

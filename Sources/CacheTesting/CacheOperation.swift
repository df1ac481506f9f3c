/// One of the four requirements of the `Cache` protocol, as named by the test doubles.
///
/// ``FaultInjectingCache`` fails or holds calls per operation; ``RecordingCache/Call/operation`` tells
/// which operation a recorded call was. The conveniences map onto these: `value(forKey:)` and
/// `contains(_:)` are ``entry`` calls, `setValue(_:forKey:expiry:)` is a ``setEntry`` call, and
/// each completion-handler variant is the operation it wraps.
///
/// ```swift
/// let cache = FaultInjectingCache<String, Data>()
/// cache.failNext(.setEntry)
/// ```
///
/// A plain value; `Sendable` and thread-safe.
public enum CacheOperation: String, CaseIterable, Hashable, Sendable, CustomStringConvertible {
    /// `entry(forKey:)`: a read.
    case entry
    /// `setEntry(_:forKey:)`: a write.
    case setEntry
    /// `removeEntry(forKey:)`: the removal of one key.
    case removeEntry
    /// `removeAll()`: the removal of every entry.
    case removeAll

    /// The requirement's name, for example `setEntry`.
    public var description: String { rawValue }
}

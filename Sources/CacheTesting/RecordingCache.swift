import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A cache that records every call made to it, in order, so tests can assert how code uses a cache.
///
/// It wraps another cache (``init(wrapping:)``) or, by default, keeps entries in a simple unlimited
/// in-memory store that honours expiry on the given clock (``init(clock:)``). A call is recorded when
/// it starts, before it reaches the storage, so calls that then throw are recorded too.
///
/// The conveniences show up as the requirement they use: `value(forKey:)` and `contains(_:)` as
/// ``Call/entry(_:)``, `setValue(_:forKey:expiry:)` as ``Call/setEntry(_:expiresAt:)`` with the
/// resolved instant.
///
/// ```swift
/// let clock = ManualClock()
/// let cache = RecordingCache<String, Data>(clock: clock)
/// let avatars = AvatarStore(cache: cache)
/// _ = try await avatars.avatar(for: "ada")   // a miss, then a download stored for an hour
/// #expect(cache.calls == [
///     .entry("ada"),
///     .setEntry("ada", expiresAt: clock.now.addingTimeInterval(3600)),
/// ])
/// ```
///
/// Thread-safe: every method may be called from any thread or task. Calls made at the same time are
/// recorded in the order they took the internal lock.
public final class RecordingCache<Key: Hashable & Sendable, Value: Sendable>: StaleRetainingCache,
    TagRemovingCache
{
    /// One recorded call.
    ///
    /// A plain value; `Sendable` and thread-safe. Compare recorded calls with `==`.
    public enum Call: Hashable, Sendable, CustomStringConvertible {
        /// `entry(forKey:)` with this key.
        case entry(Key)
        /// `setEntry(_:forKey:)` with this key and the entry's absolute expiry (`nil` for never).
        case setEntry(Key, expiresAt: Date?)
        /// `removeEntry(forKey:)` with this key.
        case removeEntry(Key)
        /// `removeAll()`.
        case removeAll
        /// `removeAll(taggedWith:)`, with the tag.
        case removeAllTagged(String)

        /// Which requirement was called.
        public var operation: CacheOperation {
            switch self {
            case .entry: .entry
            case .setEntry: .setEntry
            case .removeEntry: .removeEntry
            case .removeAll, .removeAllTagged: .removeAll
            }
        }

        /// The key the call named, or `nil` for ``removeAll``.
        public var key: Key? {
            switch self {
            case .entry(let key), .setEntry(let key, _), .removeEntry(let key): key
            case .removeAll, .removeAllTagged: nil
            }
        }

        /// `setEntry("a", expiresAt: 2026-01-01 00:00:10 +0000)`.
        public var description: String {
            switch self {
            case .entry(let key): "entry(\(key))"
            case .setEntry(let key, let expiresAt): "setEntry(\(key), expiresAt: \(expiresAt.map { "\($0)" } ?? "nil"))"
            case .removeEntry(let key): "removeEntry(\(key))"
            case .removeAll: "removeAll"
            case .removeAllTagged(let tag): "removeAll(taggedWith: \(tag))"
            }
        }
    }

    /// The storage the calls go to.
    public let base: any Cache<Key, Value>
    private let recorded = Locked<[Call]>([])

    /// Creates a recording cache in front of `base`.
    ///
    /// - Parameter base: The cache every call is forwarded to; its clock is this cache's clock.
    public init(wrapping base: any Cache<Key, Value>) {
        self.base = base
    }

    /// Creates a recording cache over its own unlimited in-memory storage.
    ///
    /// - Parameter clock: The clock that decides expiry; the system clock by default. Pass a
    ///   ``ManualClock`` to test expiry without sleeping.
    public init(clock: any CacheClock = SystemClock()) {
        self.base = InMemoryCache(clock: clock)
    }

    /// The clock of the underlying storage.
    public var clock: any CacheClock { base.clock }

    /// Every call made so far, oldest first.
    ///
    /// - Complexity: O(n) in the number of calls (a copy).
    public var calls: [Call] { recorded.value }

    /// Forgets every recorded call; the stored entries are kept.
    ///
    /// - Complexity: O(n) in the number of calls recorded.
    public func reset() {
        recorded.withLock { $0.removeAll() }
    }

    // MARK: - Cache

    /// Records ``Call/entry(_:)``, then reads from the storage.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The live entry, or `nil` on a miss.
    /// - Throws: What the storage throws.
    /// - Complexity: One append under the recording lock (amortized O(1)), plus what the storage's read
    ///   costs (O(1) on average for the default in-memory storage).
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        record(.entry(key))
        return try await base.entry(forKey: key)
    }

    /// Records ``Call/entry(_:)``, then reads the storage's fresh-or-stale entry (a plain read when the
    /// storage keeps no stale entries), so that wrapping a tier hides none of its stale entries from a load
    /// with `LoadOptions`.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The fresh or stale entry, or `nil`.
    /// - Throws: What the storage throws.
    /// - Complexity: That of ``entry(forKey:)``.
    public func entryIncludingStale(forKey key: Key) async throws -> CacheEntry<Value>? {
        record(.entry(key))
        return try await base.entryIncludingStaleIfRetained(forKey: key)
    }

    /// Records ``Call/setEntry(_:expiresAt:)``, then writes to the storage.
    ///
    /// - Parameters:
    ///   - entry: The entry to store.
    ///   - key: The key to store it under.
    /// - Throws: What the storage throws.
    /// - Complexity: One append under the recording lock, plus what the storage's write costs.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) async throws {
        record(.setEntry(key, expiresAt: entry.expiresAt))
        try await base.setEntry(entry, forKey: key)
    }

    /// Reads the live value for `key` through ``entry(forKey:)`` (so it is recorded and faulted as one).
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value, or `nil` on a miss.
    /// - Throws: What ``entry(forKey:)`` throws.
    /// - Complexity: That of ``entry(forKey:)``.
    public func value(forKey key: Key) async throws -> Value? {
        try await valueThroughEntry(forKey: key)
    }

    /// Stores `value` through ``setEntry(_:forKey:)`` (so it is recorded and faulted as one), with
    /// `expiry` resolved against ``clock`` now.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - expiry: When it expires; `nil` for `.never`.
    /// - Throws: What ``setEntry(_:forKey:)`` throws.
    /// - Complexity: That of ``setEntry(_:forKey:)``.
    public func setValue(_ value: Value, forKey key: Key, expiry: Expiry? = nil) async throws {
        try await setValueThroughEntry(value, forKey: key, expiry: expiry)
    }

    /// Records ``Call/removeEntry(_:)``, then removes the key from the storage.
    ///
    /// - Parameter key: The key to remove.
    /// - Throws: What the storage throws.
    /// - Complexity: One append under the recording lock, plus what the storage's removal costs.
    public func removeEntry(forKey key: Key) async throws {
        record(.removeEntry(key))
        try await base.removeEntry(forKey: key)
    }

    /// Records ``Call/removeAll``, then empties the storage.
    ///
    /// - Throws: What the storage throws.
    /// - Complexity: One append under the recording lock, plus what the storage's wipe costs (O(*n*) in
    ///   the entries held for the default storage).
    public func removeAll() async throws {
        record(.removeAll)
        try await base.removeAll()
    }

    /// Records ``Call/removeAllTagged(_:)``, then removes the tag's entries from the storage.
    ///
    /// - Parameter tag: The tag to remove.
    /// - Throws: `CacheError` `.invalidArgument` when the wrapped cache cannot remove by tag (it is not a
    ///   `TagRemovingCache`); otherwise what the storage throws.
    /// - Complexity: One append under the recording lock, plus what the storage's removal costs.
    public func removeAll(taggedWith tag: String) async throws {
        record(.removeAllTagged(tag))
        try await tagRemovingBase().removeAll(taggedWith: tag)
    }

    private func record(_ call: Call) {
        recorded.withLock { $0.append(call) }
    }
}

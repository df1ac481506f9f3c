#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A cache that answers a read at once, on the caller's thread, without suspending and without I/O.
///
/// An in-memory tier (`MemoryCache`) conforms. `MultiCache` reads a conforming first tier through
/// its synchronous `entry(forKey:)` without an `await`, so a hit there costs no suspension point, no task
/// allocation and no executor check; every other read still goes through ``Cache``'s `async` API.
///
/// Conform only when a read never waits for a disk, a network or another task: a synchronous read on
/// a thread of Swift's cooperative pool must not block it.
public protocol SynchronousCache<Key, Value>: Cache {
    /// Returns the live entry for `key`, or `nil` on a miss, without suspending.
    ///
    /// The same read as ``Cache/entry(forKey:)``, for callers that cannot or need not `await`.
    ///
    /// Thread-safe.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry, with its absolute expiry and cost, or `nil` when the key is absent or its
    ///   entry has expired.
    /// - Complexity: Set by the conformer; never I/O.
    func entry(forKey key: Key) -> CacheEntry<Value>?

    /// Returns the live value for `key`, or `nil` on a miss, without suspending: ``entry(forKey:)``
    /// without the expiry and cost, which a tier can answer without building the entry.
    ///
    /// Thread-safe.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value, or `nil` when the key is absent or its entry has expired.
    /// - Complexity: Set by the conformer; never I/O.
    func value(forKey key: Key) -> Value?

    /// Returns the live value for `key` with its expiry and the clock reading it was found live at, or
    /// `nil` on a miss, without suspending: what a load with `LoadOptions` needs to decide on
    /// refresh-ahead, in plain seconds, so that its fast path builds no `Date` and reads no clock again.
    ///
    /// A default implementation reads ``entry(forKey:)`` and then ``Cache/clock``.
    ///
    /// Thread-safe.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value; its expiry in seconds since the reference date (`.infinity` for none); and
    ///   `now`, the reading of ``Cache/clock`` at which the entry was live, in the same seconds (`-.infinity`
    ///   when the entry never expires and no reading was taken). `nil` when the key is absent or expired.
    /// - Complexity: Set by the conformer; never I/O.
    func valueAndExpiry(forKey key: Key) -> (value: Value, expiresAt: TimeInterval, now: TimeInterval)?

    /// Returns the live values for those of `keys` the cache holds, and the keys it lacks, without
    /// suspending: the bulk read of a `MultiCache`'s first tier, which asks the next tier for `missing`.
    ///
    /// A default implementation reads ``value(forKey:)`` once per distinct key; a conformer that can read
    /// many keys at a lower cost (one lock, one clock reading) should implement it, and may then read a key
    /// listed twice twice.
    ///
    /// Thread-safe.
    ///
    /// - Parameter keys: The keys to look up.
    /// - Returns: The live values by key (a key listed twice is there once), and the keys without one, in
    ///   no set order (a key listed twice may be there twice).
    /// - Complexity: Set by the conformer; never I/O.
    func valuesAndMisses(forKeys keys: [Key]) -> (values: [Key: Value], missing: [Key])
}

extension SynchronousCache {
    /// Reads ``entry(forKey:)``, drops the cost, and reads ``Cache/clock`` when the entry expires.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value, its expiry and the clock reading, or `nil` on a miss.
    /// - Complexity: That of ``entry(forKey:)``.
    public func valueAndExpiry(forKey key: Key) -> (value: Value, expiresAt: TimeInterval, now: TimeInterval)? {
        guard let entry = entry(forKey: key) else { return nil }
        guard let expiresAt = entry.expiresAt else { return (entry.value, .infinity, -.infinity) }
        return (entry.value, expiresAt.timeIntervalSinceReferenceDate, clock.now.timeIntervalSinceReferenceDate)
    }

    /// Reads ``value(forKey:)`` once per distinct key.
    ///
    /// - Parameter keys: The keys to look up.
    /// - Returns: The live values by key and the distinct keys without one.
    /// - Complexity: *n* reads for *n* distinct keys.
    public func valuesAndMisses(forKeys keys: [Key]) -> (values: [Key: Value], missing: [Key]) {
        var found: [Key: Value] = [:]
        found.reserveCapacity(keys.count)
        var missing: [Key] = []
        var seen = Set<Key>()
        for key in keys where seen.insert(key).inserted {
            if let value = value(forKey: key) { found[key] = value } else { missing.append(key) }
        }
        return (found, missing)
    }
}

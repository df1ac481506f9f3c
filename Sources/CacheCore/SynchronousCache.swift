import Foundation

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

    /// Returns the live value for `key` with its expiry, or `nil` on a miss, without suspending:
    /// ``entry(forKey:)`` without the cost, which a tier may keep apart from the value (a load with
    /// `LoadOptions` needs the expiry for refresh-ahead, not the cost).
    ///
    /// A default implementation reads ``entry(forKey:)``.
    ///
    /// Thread-safe.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value and its absolute expiry (`nil` for none), or `nil` when the key is absent or
    ///   expired.
    /// - Complexity: Set by the conformer; never I/O.
    func valueAndExpiry(forKey key: Key) -> (value: Value, expiresAt: Date?)?
}

extension SynchronousCache {
    /// Reads ``entry(forKey:)`` and drops the cost.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value and its expiry, or `nil` on a miss.
    /// - Complexity: That of ``entry(forKey:)``.
    public func valueAndExpiry(forKey key: Key) -> (value: Value, expiresAt: Date?)? {
        entry(forKey: key).map { ($0.value, $0.expiresAt) }
    }
}

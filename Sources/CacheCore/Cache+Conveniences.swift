import Foundation

extension Cache {
    /// Returns the live value for `key`, or `nil` on a miss.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value, or `nil` when the key is absent or expired.
    /// - Throws: What ``Cache/entry(forKey:)`` throws.
    /// - Complexity: One ``Cache/entry(forKey:)`` call.
    ///
    /// Thread-safe whenever the conformer is, which every conformer must be.
    public func value(forKey key: Key) async throws -> Value? {
        try await entry(forKey: key)?.value
    }

    /// Stores `value` under `key` with an expiry resolved against ``Cache/clock`` now.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key to store it under.
    ///   - expiry: When the entry expires. A relative expiry becomes an absolute instant here, once.
    ///     It has no default on purpose: a tier's own default expiry is applied by the tier's own
    ///     `setValue` overload, which a defaulted argument here would shadow in `async` code.
    ///   - cost: The entry's cost for cost limits, in the tier's units (for example bytes), or `nil` to
    ///     let the tier compute it.
    /// - Throws: What ``Cache/setEntry(_:forKey:)`` throws.
    /// - Complexity: One read of ``Cache/clock`` and one ``Cache/setEntry(_:forKey:)`` call.
    ///
    /// Thread-safe whenever the conformer is, which every conformer must be.
    public func setValue(_ value: Value, forKey key: Key, expiry: Expiry, cost: Int? = nil) async throws {
        let entry = CacheEntry(value: value, expiresAt: expiry.expirationDate(from: clock.now), cost: cost)
        try await setEntry(entry, forKey: key)
    }

    /// Whether a live entry exists for `key`.
    ///
    /// This is a full read: it counts as a hit or a miss in the tier's statistics, refreshes the entry's
    /// recency in an LRU tier, and in a disk tier reads and decrypts the file.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: `true` on a hit.
    /// - Throws: What ``Cache/entry(forKey:)`` throws.
    /// - Complexity: One ``Cache/entry(forKey:)`` call.
    public func contains(_ key: Key) async throws -> Bool {
        try await entry(forKey: key) != nil
    }
}

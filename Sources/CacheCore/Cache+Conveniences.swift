#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension Cache {
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

extension Cache {
    /// The body of a conformer's ``Cache/value(forKey:)`` that reads through ``Cache/entry(forKey:)``.
    ///
    /// Not a default implementation on purpose (see ``Cache``: a default would outrank a synchronous
    /// tier's own method in `async` code); each conformer calls it from its own witness.
    package func valueThroughEntry(forKey key: Key) async throws -> Value? {
        try await entry(forKey: key)?.value
    }

    /// The body of a conformer's ``Cache/setValue(_:forKey:expiry:)`` that writes through
    /// ``Cache/setEntry(_:forKey:)``, resolving `expiry` (or `defaultExpiry` when it is `nil`) against
    /// ``Cache/clock`` now.
    package func setValueThroughEntry(
        _ value: Value, forKey key: Key, expiry: Expiry?, defaultExpiry: Expiry = .never
    ) async throws {
        let expiresAt = (expiry ?? defaultExpiry).expirationDate(from: clock.now)
        try await setEntry(CacheEntry(value: value, expiresAt: expiresAt), forKey: key)
    }
}

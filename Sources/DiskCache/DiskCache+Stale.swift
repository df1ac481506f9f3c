import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension DiskCache: StaleRetainingCache {
    /// Returns the live entry for `key`, or an expired one that was stored with a later
    /// `CacheEntry/staleUntil` (a load with `LoadOptions`, or a `MultiCache` write-back of one), without
    /// removing it; `nil` when there is neither.
    ///
    /// Plain reads (`entry(forKey:)`, `value(forKey:)`) never return such a stale entry: it is a miss for
    /// them, left in place until its `staleUntil`, then removed like any expired entry (by a read,
    /// `removeExpired()` or a sweep). The record stores the stale retention in its header
    /// (Docs/DiskFormat.md).
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry with its expiry, stale-until instant and cost, or `nil`.
    /// - Throws: What `entry(forKey:)` throws.
    /// - Complexity: That of `entry(forKey:)`: file I/O on the caller's thread.
    ///
    /// Thread-safe.
    public func entryIncludingStale(forKey key: Key) throws -> CacheEntry<Value>? {
        guard let record = try engine.read(keyBytes: try canonicalBytes(of: key), includingStale: true) else {
            return nil
        }
        return CacheEntry(
            value: try decode(record.valueBytes), expiresAt: record.header.expiresAt, cost: record.header.cost,
            staleUntil: record.header.staleUntil, tags: record.tags)
    }

    /// Returns the entry for `key` fresh or stale, like the synchronous `entryIncludingStale(forKey:)`,
    /// without blocking the cooperative thread pool.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry, or `nil`.
    /// - Throws: What the synchronous form throws; `CancellationError` when cancelled before the read.
    /// - Complexity: That of the synchronous form, run on the I/O queue.
    ///
    /// Thread-safe.
    public func entryIncludingStale(forKey key: Key) async throws -> CacheEntry<Value>? {
        try await onIOQueue { try self.entryIncludingStale(forKey: key) as CacheEntry<Value>? }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One live entry, as listed by ``DiskCache/listEntries()``.
///
/// A plain value; `Sendable` and thread-safe. A snapshot: the entry may change or go after the listing.
public struct DiskCacheEntryInfo<Key: Sendable>: Sendable {
    /// The entry's key, decrypted from the record.
    public var key: Key
    /// The entry file's size on disk, in bytes (header, nonce, ciphertext and tag).
    public var size: Int
    /// The absolute expiry instant, or `nil` for none.
    public var expiresAt: Date?
    /// The last read or write of the entry (the file's modification time, which Strata sets itself).
    public var lastAccess: Date
    /// The tags the entry was stored with (``CacheEntry/tags``), decrypted from the record; empty for an
    /// untagged entry. A listed entry's tags are all current: an entry one of whose tags was removed is
    /// not live, so it is not listed.
    public var tags: Set<String>

    /// Creates an entry description.
    ///
    /// - Parameters:
    ///   - key: The key.
    ///   - size: The file size in bytes.
    ///   - expiresAt: The expiry instant, or `nil`.
    ///   - lastAccess: The last access instant.
    ///   - tags: The entry's tags; empty by default.
    public init(key: Key, size: Int, expiresAt: Date?, lastAccess: Date, tags: Set<String> = []) {
        self.key = key
        self.size = size
        self.expiresAt = expiresAt
        self.lastAccess = lastAccess
        self.tags = tags
    }
}

extension DiskCacheEntryInfo: Equatable where Key: Equatable {}

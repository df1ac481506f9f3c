import CacheCore
import Foundation
import RedisConnection
import SealedRecord

extension RedisCache: TagVersioningCache {
    /// Makes every entry carrying `tag` a miss, for every process sharing the namespace: one `INCR` of the
    /// tag's version key (`strata:v1:<namespace>:t:<HMAC of the tag>`).
    ///
    /// Entries stamped with the older version stay on the server until their TTL or Redis's eviction
    /// takes them; every read finds them stale. Other processes' tracking connections see the `INCR` and
    /// publish `.tags([tag])` to their `MultiCache`, which drops the tag's entries from the tiers above.
    ///
    /// - Parameter tag: The tag to remove: any string, the empty one included, of at most 65,535 bytes of
    ///   UTF-8 (the tag rule of every sealing tier, Docs/Tags.md).
    /// - Throws: `CacheError` `.invalidArgument` for a longer tag (nothing is sent); `.wrongMasterKey`; `.io`;
    ///   `CancellationError`.
    /// - Complexity: O(1) however many entries carry the tag: one round trip.
    public func removeAll(taggedWith tag: String) async throws {
        try TagBlock.validate(tag)
        try await verifyMasterKey()
        let name = try keys.tagKey(for: tag)
        invalidations.trackTag(name, tag)
        let reply = try await send(RESPCommand(arguments: [Array("INCR".utf8), name]))
        guard case .integer = reply else { throw CacheError(.io, "the Redis server answered INCR with \(reply)") }
    }

    /// Reads the current version of each of `tags` in this namespace (0 for a tag never removed).
    ///
    /// - Parameter tags: The tags to read.
    /// - Returns: The versions.
    /// - Throws: `CacheError` `.invalidArgument` for a tag over 65,535 bytes of UTF-8 or more than 65,535 tags
    ///   (nothing is sent); `.wrongMasterKey`; `.io`; `CancellationError`.
    /// - Complexity: One round trip (`MGET`) for any number of tags.
    public func tagVersions(for tags: Set<String>) async throws -> CacheTagVersions {
        try TagBlock.validate(tags)
        try await verifyMasterKey()
        return CacheTagVersions(try await currentTagVersions(of: tags))
    }

    /// Stores `entry` stamped with the tag versions `versions` (read by ``tagVersions(for:)`` before a
    /// load): if a tag was removed since, every read finds the entry stale.
    ///
    /// - Parameters:
    ///   - entry: The entry, with its tags.
    ///   - key: The key.
    ///   - versions: A snapshot from ``tagVersions(for:)``; a tag it lacks is stamped with its current
    ///     version.
    /// - Throws: What ``setEntry(_:forKey:)`` throws.
    /// - Complexity: That of ``setEntry(_:forKey:)``, plus one `MGET` when the snapshot lacks a tag.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key, taggedAt versions: CacheTagVersions) async throws
    {
        try TagBlock.validate(entry.tags)
        try await verifyMasterKey()
        guard !entry.tags.isEmpty else { return try await write(entry, forKey: key, tagVersions: nil) }
        var stamped = versions.versions.filter { entry.tags.contains($0.key) }
        let missing = entry.tags.subtracting(stamped.keys)
        if !missing.isEmpty { stamped.merge(try await currentTagVersions(of: missing)) { old, _ in old } }
        try await write(entry, forKey: key, tagVersions: stamped)
    }

    /// The current versions of `tags`, in one `MGET`; each tag's name is remembered for tracking.
    func currentTagVersions(of tags: Set<String>) async throws -> [String: UInt64] {
        guard !tags.isEmpty else { return [:] }
        let ordered = Array(tags)
        var names: [[UInt8]] = []
        for tag in ordered {
            let name = try keys.tagKey(for: tag)
            invalidations.trackTag(name, tag)
            names.append(name)
        }
        let reply = try await send(RESPCommand(arguments: [Array("MGET".utf8)] + names))
        guard case .array(let items) = reply, items.count == ordered.count else {
            throw CacheError(.io, "the Redis server answered MGET with \(reply)")
        }
        var versions: [String: UInt64] = [:]
        for (tag, item) in zip(ordered, items) { versions[tag] = try Self.epochValue(item) }
        return versions
    }
}

import CacheCore
import RedisConnection
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RedisCache: TagVersioningCache {
    /// Makes every entry carrying `tag` a miss, for every process sharing the namespace: one `INCR` of the
    /// tag's version key (`strata:v2:<namespace>:{<namespace>}:t:<HMAC of the tag's canonical bytes>`), or, when the key is
    /// missing, its creation at a fresh random base (one `EVAL`; Docs/RedisCache.md, "Counters").
    ///
    /// The tag is known by its canonical bytes (NFC): "é" composed and decomposed name one version key.
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
        // Fenced like `removeAll()`: a load in flight through this tier's load-once might carry the tag.
        _ = try await loadOnce.fenced(nil) { try await advanceCounter(name) }
    }

    /// Reads the current version of each of `tags` in this namespace, creating a missing version key at a fresh
    /// random base (a stamp is only ever taken from a counter that exists; Docs/RedisCache.md, "Counters").
    ///
    /// - Parameter tags: The tags to read.
    /// - Returns: The versions.
    /// - Throws: `CacheError` `.invalidArgument` for a tag over 65,535 bytes of UTF-8 or more than 65,535 tags
    ///   (nothing is sent); `.wrongMasterKey`; `.io`; `CancellationError`.
    /// - Complexity: One round trip (`MGET`) for any number of tags, two when some version key is missing.
    public func tagVersions(for tags: Set<String>) async throws -> CacheTagVersions {
        try TagBlock.validate(tags)
        try await verifyMasterKey()
        return CacheTagVersions(try await stampingTagVersions(of: tags))
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
    /// - Complexity: That of ``setEntry(_:forKey:)``, plus ``tagVersions(for:)``'s when the snapshot lacks a tag.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key, taggedAt versions: CacheTagVersions) async throws
    {
        try TagBlock.validate(entry.tags)
        try await verifyMasterKey()
        let stamps = try await stamps(for: entry, from: versions)
        try await loadOnce.fenced(key) { try await write(entry, forKey: key, tagVersions: stamps) }
    }

    /// The stamps of `entry`'s tags, from the snapshot `versions`: `nil` without tags; a tag the snapshot lacks
    /// is stamped with its current version.
    func stamps(for entry: CacheEntry<Value>, from versions: CacheTagVersions) async throws -> [String: UInt64]? {
        guard !entry.tags.isEmpty else { return nil }
        var stamped = versions.versions.filter { entry.tags.contains($0.key) }
        let missing = entry.tags.subtracting(stamped.keys)
        if !missing.isEmpty { stamped.merge(try await stampingTagVersions(of: missing)) { old, _ in old } }
        return stamped
    }

    /// The current versions of `tags` for judging an entry, in one `MGET`: a tag whose version key is missing
    /// is left out, so it matches no stamp. Each tag's name is remembered for tracking.
    func currentTagVersions(of tags: Set<String>) async throws -> [String: UInt64] {
        var versions: [String: UInt64] = [:]
        for counter in try await readTagCounters(tags) { versions[counter.tag] = counter.version }
        return versions
    }

    /// The versions to stamp `tags` with: the current ones, a missing version key created at a fresh random
    /// base first (one `EVAL` for all of them; a key another client created meanwhile is kept).
    func stampingTagVersions(of tags: Set<String>) async throws -> [String: UInt64] {
        let counters = try await readTagCounters(tags)
        var versions: [String: UInt64] = [:]
        var missing: [(tag: String, name: [UInt8])] = []
        for counter in counters {
            if let version = counter.version {
                versions[counter.tag] = version
            } else {
                missing.append((counter.tag, counter.name))
            }
        }
        guard !missing.isEmpty else { return versions }
        let created = try await createCounters(missing.map(\.name))
        for (counter, version) in zip(missing, created) { versions[counter.tag] = version }
        return versions
    }

    /// Each of `tags` with its version key's name and value (`nil`: missing), in one `MGET`.
    private func readTagCounters(
        _ tags: Set<String>
    ) async throws -> [(tag: String, name: [UInt8], version: UInt64?)] {
        guard !tags.isEmpty else { return [] }
        let ordered = Array(tags)
        var names: [[UInt8]] = []
        for tag in ordered {
            let name = try keys.tagKey(for: tag)
            invalidations.trackTag(name, tag)
            names.append(name)
        }
        // Every tag's version key sits in the namespace's slot (NamespaceKeys): one `MGET` on a cluster too.
        let reply = try await send(RESPCommand(arguments: [Array("MGET".utf8)] + names), key: keys.epochKey)
        guard case .array(let items) = reply, items.count == ordered.count else {
            throw CacheError(.io, "the Redis server answered MGET with \(reply)")
        }
        return try zip(zip(ordered, names), items).map { pair, item in
            (tag: pair.0, name: pair.1, version: try Self.counterValue(item))
        }
    }
}

/// A cache that keeps entries with their tags and can make every entry carrying a tag a miss at once.
///
/// Every Strata tier conforms (`MemoryCache`, `DiskCache`, `RedisCache`, through ``TagVersioningCache``, and
/// `MultiCache`), as do the CacheTesting doubles. A cache of your own need not: ``Cache`` asks for the basics
/// only. A `MultiCache` probes each tier for this protocol once, and keeps no tagged entry in a tier without
/// it (it removes the key from that tier instead of writing a tagged entry), so a removal by tag has nothing
/// to reach there and no tagged value can outlive its tag.
///
/// Thread safety: conformers are `Sendable`; every method may be called from any thread.
public protocol TagRemovingCache<Key, Value>: Cache {
    /// Makes every entry that carries `tag` a miss, in O(1) however many entries carry it.
    ///
    /// The tier advances the tag's version counter; an entry stamped with an older version is a miss from
    /// then on and is dropped lazily (when a read finds it, or by eviction and trimming). No clock is
    /// read, so clock skew between processes sharing a tier cannot revive an entry. Entries without the
    /// tag are untouched.
    ///
    /// - Parameter tag: The tag whose entries to remove; any string (the empty one included). The tiers
    ///   that seal records (disk, Redis) hold tags of at most 65,535 bytes of UTF-8 (Docs/Tags.md, "The tag
    ///   rule").
    /// - Throws: ``CacheError`` when the tier cannot be changed; `.invalidArgument` from a sealing tier for
    ///   a longer tag.
    /// - Complexity: Set by the conformer; O(1) in the number of tagged entries for every Strata tier.
    func removeAll(taggedWith tag: String) async throws
}

/// What a tier's fences said when a load began: handed back with the loaded entry, it lets the tier refuse
/// the store when a removal of the key, a clear or a tag removal happened since — in this process or any
/// other sharing the tier.
///
/// The numbers are the tier's own (for the Redis tier: the key's removal counter, the namespace's epoch and
/// the tags' version keys). A ticket is only ever handed back to the tier that issued it; fields are public
/// so that a conformer outside this package can issue its own, and so that tests can age one.
///
/// Thread safety: a plain value; `Sendable`.
public struct CacheLoadTicket: Sendable, Hashable {
    /// The key's removal counter when the load began: every removal of the key advances it.
    public var keyVersion: UInt64
    /// The counter of whole-cache removals (`removeAll()`) when the load began.
    public var epoch: UInt64
    /// The version of each of the load's tags when the load began.
    public var tagVersions: CacheTagVersions
    /// When the load began, on the monotonic clock: a tier refuses a store once its counters may have
    /// expired since (the Redis tier: 6 hours).
    public var startedAt: ContinuousClock.Instant

    /// Creates a ticket.
    ///
    /// - Parameters:
    ///   - keyVersion: The key's removal counter.
    ///   - epoch: The whole-cache removal counter.
    ///   - tagVersions: The tags' versions.
    ///   - startedAt: When the load began.
    public init(
        keyVersion: UInt64, epoch: UInt64, tagVersions: CacheTagVersions = CacheTagVersions(),
        startedAt: ContinuousClock.Instant
    ) {
        self.keyVersion = keyVersion
        self.epoch = epoch
        self.tagVersions = tagVersions
        self.startedAt = startedAt
    }
}

/// A tier that stores a loaded entry only if nothing removed its key since the load began: no
/// `removeEntry(forKey:)`, `removeAll()` or `removeAll(taggedWith:)` of one of its tags, anywhere.
///
/// The cross-process twin of the fence a `MultiCache` keeps in one process: a load that began before
/// another process removed the key must not write its now-stale result back. Take a ticket before the
/// loader runs, then store through it:
///
/// ```swift
/// let ticket = try await redis.loadTicket(forKey: "user:7", tags: ["users"])
/// let user = try await database.user(7)
/// let stored = try await redis.setEntry(CacheEntry(value: user, tags: ["users"]), forKey: "user:7", ticket: ticket)
/// ```
///
/// A conformer checks the key's counter atomically with the write (the Redis tier: one server-side
/// script), so no removal can land between the check and the store.
///
/// Thread safety: conformers are `Sendable`; every method may be called from any thread.
public protocol LoadFencingCache<Key, Value>: Cache {
    /// Reads the fences of `key` and of `tags` before a load of `key` runs.
    ///
    /// - Parameters:
    ///   - key: The key about to be loaded.
    ///   - tags: The tags the loaded entry will carry.
    /// - Returns: The ticket to hand to ``setEntry(_:forKey:ticket:)``.
    /// - Throws: ``CacheError`` when the tier cannot be read.
    /// - Complexity: Set by the conformer; the Redis tier takes one round trip (two, concurrently, on a
    ///   cluster, plus one when a counter must be created).
    func loadTicket(forKey key: Key, tags: Set<String>) async throws -> CacheLoadTicket

    /// Stores `entry` under `key` only if no removal of `key` (or clear, or removal of one of the ticket's
    /// tags) happened since `ticket` was taken, and the ticket is young enough for the tier to tell.
    ///
    /// An entry already expired is not stored. A tag the ticket lacks is stamped with its current version.
    ///
    /// - Parameters:
    ///   - entry: The loaded entry, with its tags.
    ///   - key: The key to store it under.
    ///   - ticket: A ticket this tier returned from ``loadTicket(forKey:tags:)`` for `key`.
    /// - Returns: Whether the entry was stored; `false` when a removal came in between (the loaded value
    ///   may be returned to the caller, but is not cached).
    /// - Throws: What ``Cache/setEntry(_:forKey:)`` throws.
    /// - Complexity: That of ``Cache/setEntry(_:forKey:)``: the check runs with the write.
    func setEntry(_ entry: CacheEntry<Value>, forKey key: Key, ticket: CacheLoadTicket) async throws -> Bool
}

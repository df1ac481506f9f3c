#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A cache that hosts Strata's load-once itself, so that one extension gives it every load call:
/// `value(forKey:expiry:tags:options:orLoad:)` and `values(forKeys:expiry:tags:options:orLoad:)`, with load
/// options, tags and bulk loads in any combination.
///
/// `MemoryCache`, `DiskCache` and `RedisCache` conform. **Conform only within Strata:** the one requirement,
/// ``loadHost``, returns a ``LoadHost``, whose members are package-level, so no type outside Strata can build
/// one (Docs/Loading.md, "Written once, above the tiers", says why the protocol is public all the same). A
/// cache of your own gets load-once by being a tier of a `MultiCache`.
///
/// Thread safety: conformers are `Sendable`; every load call may be made from any task at once.
public protocol LoadHostingCache<Key, Value>: AnyObject, StaleRetainingCache, TagRemovingCache {
    /// The cache's load-once: its single-flight table and its store of loaded values. Opaque outside Strata.
    ///
    /// - Complexity: O(1); the first call creates the cache's load-once coordinator.
    var loadHost: LoadHost<Key, Value> { get }
}

/// What a ``LoadHostingCache`` hands the shared load-once extension: its single-flight table, the expiry of a
/// value loaded without one, what it notes before a loader runs, and its store of a loaded value.
///
/// Public only because ``LoadHostingCache``'s requirement returns it; every member is package-level, so only
/// Strata's tiers can make or read one.
///
/// A tier makes its host once, at its first load, and keeps it: a load-once hit reads it with one atomic load.
///
/// Thread safety: immutable and `Sendable`; its closures may be called from any task.
public final class LoadHost<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// The tier's single-flight table (created by its first load).
    @usableFromInline package let coordinator: CoordinatorStorage<Key, Value>
    /// The expiry of a value loaded with `expiry: nil`: the tier's default, as for its `setValue`.
    package let defaultExpiry: Expiry
    /// Whether every load needs ``stamp`` (a tier that fences loads across processes: its tickets), or only
    /// one with tags.
    package let stampsEveryLoad: Bool
    /// Notes, before the loader of `keys` runs, what each key's store will be checked against: the versions
    /// of `tags` (and, on a tier that fences loads across processes, each key's ticket). A key left out is
    /// loaded but not stored. Not called for a load without tags unless ``stampsEveryLoad``.
    package let stamp: @Sendable (_ keys: [Key], _ tags: Set<String>) async -> [Key: LoadStamp]
    /// Stores `entry`, the value of load `loadID`, under `key` unless a write or removal fenced the load,
    /// stamped with `stamp`; reports a failure rather than throwing. `now` is the clock reading the entry's
    /// expiry was resolved against (`nil` for an entry that never expires: no reading was taken). Holds the
    /// tier weakly.
    package let store:
        @Sendable (
            _ loadID: UInt64, _ key: Key, _ entry: CacheEntry<Value>, _ stamp: LoadStamp, _ now: Date?
        ) async -> Void
    /// Waits for this process's turn to load a key, on a tier that shares loads across processes
    /// (`LoadLeasingCache`); `nil` elsewhere. Asked before a single-key load's stamp; bulk loads do not ask.
    package let turn: (@Sendable (_ key: Key) async -> LoadTurn<Value>)?
    /// Whether a process holds the lease on loading a key (`LoadLeasingCache`); `nil` elsewhere. Asked by a
    /// fail-safe caller holding a stale value, which then serves it rather than wait.
    package let isLeased: (@Sendable (_ key: Key) async -> Bool)?

    /// The coordinator's change sequence, read before a fast path reads the tier (see
    /// ``CoordinatorStorage/value(afterMissOf:sequenceSeen:recheck:load:store:)``).
    @inlinable
    package var changeSequence: UInt64 { coordinator.changeSequence }

    /// A tier's load-once.
    ///
    /// - Parameters:
    ///   - coordinator: The tier's single-flight table.
    ///   - defaultExpiry: The expiry of a value loaded without one.
    ///   - stampsEveryLoad: Whether a load without tags needs `stamp` too.
    ///   - stamp: Notes what each key's store is checked against, before the loader runs.
    ///   - store: Stores a loaded entry, fenced by its load's id; must hold the tier weakly, since a
    ///     background refresh may outlive every caller.
    ///   - turn: Waits for this process's turn to load a key, on a tier that shares loads across processes;
    ///     requires `stampsEveryLoad`.
    ///   - isLeased: Whether a process holds the lease on loading a key, on such a tier.
    package init(
        coordinator: CoordinatorStorage<Key, Value>,
        defaultExpiry: Expiry,
        stampsEveryLoad: Bool = false,
        stamp: @escaping @Sendable ([Key], Set<String>) async -> [Key: LoadStamp],
        store: @escaping @Sendable (UInt64, Key, CacheEntry<Value>, LoadStamp, Date?) async -> Void,
        turn: (@Sendable (Key) async -> LoadTurn<Value>)? = nil,
        isLeased: (@Sendable (Key) async -> Bool)? = nil
    ) {
        self.coordinator = coordinator
        self.defaultExpiry = defaultExpiry
        self.stampsEveryLoad = stampsEveryLoad
        self.stamp = stamp
        self.store = store
        self.turn = turn
        self.isLeased = isLeased
    }
}

/// What a tier noted before a load's loader ran, handed back with the loaded value so that its store can
/// refuse a value that a removal made stale meanwhile.
package struct LoadStamp: Sendable {
    /// The versions of the load's tags when it began; the stored entry is stamped with them, so a
    /// `removeAll(taggedWith:)` since leaves it already a miss.
    package var tagVersions: CacheTagVersions
    /// The ticket of a tier that fences loads across processes (`LoadFencingCache`); `nil` elsewhere.
    package var ticket: CacheLoadTicket?
    /// Gives up the load's lease once its value is stored (`LoadLeasingCache`); `nil` without one.
    package var release: (@Sendable () -> Void)?

    /// A stamp.
    package init(tagVersions: CacheTagVersions = CacheTagVersions(), ticket: CacheLoadTicket? = nil) {
        self.tagVersions = tagVersions
        self.ticket = ticket
    }
}

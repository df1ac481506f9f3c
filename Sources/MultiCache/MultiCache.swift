import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A cache that composes an ordered list of tiers, fastest first, into one ``Cache``.
///
/// ```swift
/// let memory = try MemoryCache<String, Data>(countLimit: 1_000)
/// let disk = try DiskCache<String, Data>(configuration: .init(name: "thumbnails"), codec: .data)
/// let cache = try MultiCache<String, Data>(tiers: [
///     .init(memory, name: "memory", maximumLifetime: .seconds(60)),
///     .init(disk, name: "disk"),
/// ])
/// let thumbnail = try await cache.value(forKey: url.absoluteString, expiry: .seconds(3_600)) {
///     try await render(url)
/// }
/// ```
///
/// A `MultiCache` knows its tiers only through the ``Cache`` protocol, so any conformer can be a tier,
/// another `MultiCache` included. Its rules, section by section:
///
/// ## Lookup order
/// A read asks the tiers in order, fastest first, and stops at the first hit: that tier's entry (value,
/// absolute expiry, cost) is the result. A tier that answers `nil` is a miss and the next tier is asked.
/// An empty value (an empty `Data`, an empty string) is a hit like any other.
///
/// ## Write-back
/// A hit in tier *i* is written back into every tier before *i* **before the read returns** (the
/// write-back is awaited, so a caller that reads again, or inspects a faster tier, finds the copy). The
/// copy keeps the entry's absolute expiry, that is its remaining lifetime, never a fresh TTL, and its
/// cost. A tier with a ``Tier/maximumLifetime`` gets a copy that expires at the earlier of the entry's
/// expiry and now plus that lifetime (``Expiry/earliest(_:_:)``). The tiers are written concurrently. A
/// write-back that a tier refuses by size (`entryTooLarge`) is skipped quietly, as is such a load fill;
/// a write-back that fails otherwise is reported to the observer (``CacheEvent/Kind/writeBackFailed``) and counted;
/// the read still returns its value. A write-back is dropped when a write or removal began while the
/// read was under way, because the entry read may no longer be the newest.
///
/// ## Writes
/// ``setEntry(_:forKey:)`` (and every convenience built on it) writes to every tier concurrently, each
/// tier's copy capped by its maximum lifetime. When some tiers fail, the call throws
/// ``CacheError/Code/tierFailure`` with one ``CacheError/TierFailure`` per failed tier (index, name,
/// cause); the tiers that succeeded keep the new entry, and each failed tier is asked (best effort) to
/// drop its old entry for the key, so it cannot keep serving a value older than the one the other tiers
/// now hold. A write fences loads in flight for its key: their results are not stored over it.
///
/// ## Removal
/// ``removeEntry(forKey:)`` removes the key from every tier, ``removeAll()`` clears every tier, both
/// concurrently and with the same partial-failure error as writes. Both fence work in flight first: a load
/// of the key (every key, for `removeAll`) that is still running will not store its result, reads in
/// flight drop their write-back, and stores that had already begun are waited for, so nothing read or
/// loaded before a removal can reappear after it.
///
/// ## Failures
/// A tier that throws on a read is skipped: the next tier is asked, the failure is counted in that
/// tier's ``MultiCacheTierStatistics/errors`` (in ``tierStatistics``) and reported as ``CacheEvent/Kind/tierReadFailed`` with
/// its ``CacheEvent/tierIndex``. A read throws only when every tier throws, with
/// ``CacheError/Code/tierFailure`` listing each. A `CancellationError` from a tier is never skipped; it
/// ends the call.
///
/// ## Load-once
/// ``value(forKey:expiry:orLoad:)`` returns the cached value or, on a miss in every tier, runs the loader
/// once per key however many callers miss at the same time: the others wait for that load and all get
/// its result, which is stored in every tier before any caller returns. A thrown error reaches every
/// waiter and is not cached; the next call loads again. A cancelled waiter gets `CancellationError` at
/// once while the load goes on for the others; when every waiter has cancelled, the load's task is
/// cancelled and its result, if any, is not stored. A write or removal of the key (or ``removeAll()``)
/// during a load fences it: its waiters still get the loaded value, but it is stored in no tier, and a
/// caller that arrives after the removal starts a new load.
///
/// ## Invalidations
/// A tier that publishes invalidations (a ``CacheInvalidationSource``, such as the Redis tier, which
/// reports other processes' writes) is subscribed to when the `MultiCache` is created, and unsubscribed
/// from when it is released. Keys it publishes are removed from the tiers *above* it (never from itself
/// or the tiers below), `.all` (and, until tags exist, `.tags`) clears those tiers. Each is fenced at
/// once, on the publisher's thread, exactly as ``removeEntry(forKey:)`` and ``removeAll()`` fence: a read
/// whose tier answered before the invalidation does not write back, a load in flight does not store, and
/// the removal waits for stores already under way. The removals themselves run on a task, one batch at
/// a time; at most 4,096 keys wait in the queue, beyond which the queue becomes one removal of
/// everything above. A tier above that fails a removal is counted and reported
/// (``CacheEvent/Kind/invalidationFailed``).
///
/// ## Time
/// ``clock`` is the first tier's clock unless one is given. It resolves relative expiries and the tiers'
/// maximum lifetimes; each tier decides liveness of what it holds with its own clock.
///
/// ## Thread safety
/// `MultiCache` is `Sendable`; every method may be called from any task at the same time. Its
/// bookkeeping sits behind one small lock that is never held across an `await`, a tier call, a loader
/// or an observer.
public final class MultiCache<Key: Hashable & Sendable, Value: Sendable>: Cache {
    /// The tiers, fastest first.
    public let tiers: [Tier]
    /// The clock that resolves relative expiries and maximum lifetimes: the first tier's unless given.
    public let clock: any CacheClock
    /// The rules by which the last tier decides what reads see, or `nil` when the first hit wins.
    public let authority: Authority?
    /// Whether ``authority`` is set, for the inlined read paths: testing the optional itself there copies
    /// its closures (three retains and releases), which cost a tier-0 hit about 8 %.
    @usableFromInline let hasAuthority: Bool

    let observer: CacheObserver?
    /// Load-once, the stores of write-backs and loaded values, and the fences of writes and removals.
    let coordinator = CoordinatorStorage<Key, Value>()
    let counters: Locked<MultiCacheCounters>
    /// Tier-0 hits, counted apart from `counters` so that the commonest read takes no lock for them.
    let tierZeroHits = HitCounter()
    /// The subscriptions to tiers that publish invalidations, and the removals they queued.
    let relay = InvalidationRelay<Key, Value>()
    /// Whether writes the authority missed may wait to be replayed, and the replay running.
    let replayGate = Locked(ReplayGate())

    /// Creates a cache over `tiers`, fastest first.
    ///
    /// - Parameters:
    ///   - tiers: The tiers in lookup order; at least one.
    ///   - clock: The clock for relative expiries and maximum lifetimes; `nil` uses the first tier's clock.
    ///   - observer: Receives events for skipped tiers and failed write-backs; called outside any lock,
    ///     on the task that noticed the event.
    ///   - authority: Makes the last tier decide what reads see while it answers (see ``Authority``);
    ///     `nil`, the default, lets the first hit win.
    /// - Throws: ``CacheError/Code/invalidArgument`` when `tiers` is empty, a tier's maximum lifetime is
    ///   zero or negative, or an authority is given with fewer than two tiers.
    /// - Complexity: O(number of tiers).
    public init(
        tiers: [Tier], clock: (any CacheClock)? = nil, observer: CacheObserver? = nil, authority: Authority? = nil
    ) throws {
        guard let first = tiers.first else {
            throw CacheError(.invalidArgument, "a MultiCache needs at least one tier")
        }
        if authority != nil, tiers.count < 2 {
            throw CacheError(
                .invalidArgument, "an authoritative tier needs a tier above it: give at least two tiers")
        }
        for (index, tier) in tiers.enumerated() {
            if let lifetime = tier.maximumLifetime, lifetime <= .zero {
                throw CacheError(
                    .invalidArgument,
                    "tier \(index) (\(tier.name)) has a maximum lifetime of \(lifetime); it must be positive")
            }
        }
        self.tiers = tiers
        self.clock = clock ?? first.cache.clock
        self.observer = observer
        self.authority = authority
        hasAuthority = authority != nil
        counters = Locked(MultiCacheCounters(tiers: tiers.map { MultiCacheTierStatistics(name: $0.name) }))
        subscribeToInvalidations()
    }

    // Background refreshes and loads whose callers timed out hold this cache weakly; once it is gone they
    // are cancelled and none starts.
    deinit {
        coordinator.cancelBackgroundLoads()
    }

    /// Creates a cache over `caches`, fastest first, each named after its type and without a maximum
    /// lifetime.
    ///
    /// A cache whose type is a `SynchronousCache` (a `MemoryCache`) becomes a tier with a synchronous
    /// read, as `Tier.init(_:name:maximumLifetime:)` makes it from the concrete type, so a first tier
    /// given here is read without `await` too.
    ///
    /// - Parameters:
    ///   - caches: The tiers in lookup order; at least one.
    ///   - clock: The clock for relative expiries; `nil` uses the first tier's clock.
    ///   - observer: Receives events for skipped tiers and failed write-backs.
    ///   - authority: Makes the last tier decide what reads see while it answers (see ``Authority``).
    /// - Throws: ``CacheError/Code/invalidArgument`` when `caches` is empty, or an authority is given with
    ///   fewer than two caches.
    /// - Complexity: O(number of tiers).
    public convenience init(
        _ caches: [any Cache<Key, Value>],
        clock: (any CacheClock)? = nil,
        observer: CacheObserver? = nil,
        authority: Authority? = nil
    ) throws {
        try self.init(tiers: caches.map(Self.tier(for:)), clock: clock, observer: observer, authority: authority)
    }

    /// A tier over `cache` that keeps its synchronous read when its dynamic type has one: the array's
    /// element type hides it from overload resolution, which would otherwise pick the `async`-only tier.
    private static func tier(for cache: any Cache<Key, Value>) -> Tier {
        if let synchronous = cache as? any SynchronousCache<Key, Value> { return Tier(synchronous) }
        return Tier(cache)
    }

    /// A snapshot of the overall counters: reads of the `MultiCache` that found an entry in some tier
    /// (`hits`) or in none (`misses`; a read that throws because every tier failed is neither), calls into
    /// a tier that threw (`errors`, the sum of ``tierStatistics``' errors), loader calls run (`loads`) and
    /// load-once callers that waited on another caller's load (`loadsShared`).
    ///
    /// Insertions, evictions, expirations and corrupt entries are each tier's own: read them from the
    /// tier; they are 0 here. The counters, the tier-0 hit count, `loads` and `loadsShared` are read one after the
    /// other, so while other tasks are working the parts may be a moment apart.
    ///
    /// Thread-safe.
    ///
    /// - Complexity: O(number of tiers).
    public var statistics: CacheStatistics {
        let counters = counters.value
        return CacheStatistics(
            hits: counters.hits + tierZeroHits.load(), misses: counters.misses,
            errors: counters.tiers.reduce(0) { $0 + $1.errors }, loads: coordinator.loads,
            loadsShared: coordinator.sharedJoins)
    }

    /// A snapshot of each tier's counters, fastest tier first: the reads it answered, the write-backs
    /// copied into it and the calls into it that threw.
    ///
    /// Thread-safe; read like ``statistics``.
    ///
    /// - Complexity: O(number of tiers), for the copy.
    public var tierStatistics: [MultiCacheTierStatistics] {
        var tiers = counters.value.tiers
        tiers[0].hits += tierZeroHits.load()
        return tiers
    }
}

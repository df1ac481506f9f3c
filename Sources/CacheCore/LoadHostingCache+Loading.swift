#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The load calls of every tier, written once (Docs/Loading.md). Each takes the same things — the key or keys,
// an expiry, tags and `LoadOptions` — so tags, bulk loads and every option combine. The bodies are one
// implementation, below; `LoadHostingCache+Synchronous.swift` adds the fast path of a tier read without
// awaiting, which calls the same bodies after a miss.
extension LoadHostingCache {
    /// Returns the live value for `key` or, on a miss, loads it once however many callers in this process ask
    /// at the same time, stores it, and returns it to all of them.
    ///
    /// ```swift
    /// let report = try await reports.value(forKey: "2026-11", expiry: .hours(6), tags: ["reports"]) {
    ///     try await api.fetchReport(month: "2026-11")
    /// }
    /// ```
    ///
    /// The first caller to miss starts the load on a task of its own; callers that miss while it runs join
    /// it instead of loading again. The value is stored before any caller returns, so a read right after
    /// this returns is a hit (unless the tier refused it: then the callers get it and nothing is stored). The
    /// load is counted in the tier's statistics (`loads`, `loadsShared`). The rules, the same on every cache
    /// (Docs/Loading.md):
    ///
    /// - A thrown error reaches every waiter and is not cached: the next call loads again.
    /// - A cancelled caller gets `CancellationError` at once; the load goes on for the others. When every
    ///   caller has cancelled, the load's task is cancelled and its result is not stored.
    /// - A write or removal of `key`, `removeAll()` or `removeAll(taggedWith:)` through this cache while the
    ///   load runs keeps its result out; the callers already waiting still get the loaded value. One that
    ///   lands after this call began but before its load did makes the load read the cache once more first.
    /// - With `tags`, the tags' versions are read before the loader runs and the entry is stamped with them,
    ///   so a `removeAll(taggedWith:)` of one of them that lands meanwhile — here or in another process
    ///   sharing the tier — leaves it already a miss. A tier whose versions cannot be read stores nothing.
    /// - A `RedisCache` also takes a load ticket before the loader runs, and its store is refused on the
    ///   server when any process removed the key, cleared the namespace or removed one of the tags since.
    /// - `options` adds fail-safe, stale-while-revalidate, refresh-ahead and loader timeouts
    ///   (Docs/Loading.md, "Resilient loads"); a value loaded with options is kept past its expiry for the
    ///   longest grace they name. With the default (every behaviour off) the call never reads a stale entry.
    ///
    /// - Parameters:
    ///   - key: The key to look up.
    ///   - expiry: The loaded value's expiry, resolved against the cache's clock when the load finishes;
    ///     `nil` (the default) for the tier's default expiry, as for its `setValue(_:forKey:expiry:)`. With
    ///     the defaults, a trailing closure is the loader: `cache.value(forKey: key) { try await fetch() }`.
    ///   - tags: The tags of the loaded entry; `removeAll(taggedWith:)` with any of them makes it a miss.
    ///   - options: The resilience behaviours; every one off by default.
    ///   - load: Produces the value on a miss; runs at most once per key at a time, on a task of its own,
    ///     never under a lock. It should honour cancellation.
    /// - Returns: The cached, stale (when `options` allow) or loaded value.
    /// - Throws: What `load` threw (unless fail-safe served a stale value); what the cache's first read
    ///   throws; `CacheError` `.invalidArgument` for options out of range, `.loadTimedOut` at the hard
    ///   timeout; `CancellationError` when the caller's task was cancelled.
    /// - Complexity: One read of the cache, plus, after a miss, one run of `load` shared by every concurrent
    ///   caller of the key and one store (and one read of the tags' versions, or a ticket, first). The first
    ///   call creates the cache's load-once coordinator; from then on each write and removal takes its lock
    ///   to fence loads in flight.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func value(
        forKey key: Key,
        expiry: Expiry? = nil,
        tags: Set<String> = [],
        options: LoadOptions = LoadOptions(),
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await hostedValue(forKey: key, expiry: expiry, tags: tags, options: options, orLoad: load)
    }

    /// Returns the values for `keys`, loading every key the cache lacks in **one** call of `loadBatch` (which
    /// may return fewer keys than asked), sharing loads with single-key callers both ways, and storing each
    /// loaded value unless a write or removal of its key fenced it.
    ///
    /// ```swift
    /// let users = try await cache.values(forKeys: ids, expiry: .minutes(5), tags: ["users"]) { missing in
    ///     try await database.users(missing)
    /// }
    /// ```
    ///
    /// Each key's load follows the rules of `value(forKey:expiry:tags:options:orLoad:)`: fenced by writes
    /// and removals of its key, stamped with the versions of `tags` read before `loadBatch` runs. With
    /// `options`, a key whose entry is stale is served as a single call would serve it (within the
    /// stale-while-revalidate grace, or under a fail-safe throttle) and refreshed in one background batch,
    /// fresh keys due for refresh-ahead join that batch, and a failed or timed-out batch falls back on the
    /// stale values that fail-safe or the soft timeout allow, for every key it was to load, or throws
    /// (Docs/Loading.md, "Bulk loads").
    ///
    /// - Parameters:
    ///   - keys: The keys to look up; duplicates are read and loaded once.
    ///   - expiry: The loaded values' expiry; `nil` for the tier's default expiry.
    ///   - tags: The tags of every loaded entry.
    ///   - options: The resilience behaviours; every one off by default.
    ///   - loadBatch: Given every missing key no other caller is loading, returns the values it found;
    ///     called once per batch, on a task of its own that runs to its end.
    /// - Returns: The cached, stale (when `options` allow) and loaded values by key; keys `loadBatch` left out
    ///   are absent.
    /// - Throws: What the cache's read, `loadBatch` or a joined load threw (unless fail-safe served every
    ///   failed key stale); `CacheError` `.invalidArgument` for options out of range, `.loadTimedOut` at the
    ///   hard timeout; `CancellationError`.
    /// - Complexity: One bulk read of the cache (a `RedisCache`: one `MGET`), plus one stale read per missing
    ///   key when `options` serve stale values, one loader call and one store per loaded key.
    ///
    /// Thread-safe: may be called from any task, concurrently with any other method.
    public func values(
        forKeys keys: [Key],
        expiry: Expiry? = nil,
        tags: Set<String> = [],
        options: LoadOptions = LoadOptions(),
        orLoad loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
    ) async throws -> [Key: Value] {
        try await hostedValues(forKeys: keys, expiry: expiry, tags: tags, options: options, orLoad: loadBatch)
    }
}

// MARK: - The one implementation

extension LoadHostingCache {
    /// The body of every single-key load call.
    @usableFromInline
    func hostedValue(
        forKey key: Key, expiry: Expiry?, tags: Set<String>, options: LoadOptions,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let host = loadHost
        let loader = HostedLoader(host: host, clock: clock, expiry: expiry, tags: tags, options: options)
        let recheck: @Sendable () async -> Value? = { [weak self] in try? await self?.value(forKey: key) }
        guard options.hasNoBehaviour else {
            return try await host.coordinator.value(
                forKey: key, options: options, clock: loader.clock, expiry: loader.expiry,
                read: { try await self.entryIncludingStale(forKey: key) }, recheck: recheck,
                load: loader.load(key, load), store: loader.store(key))
        }
        return try await host.coordinator.value(
            forKey: key, read: { try await self.value(forKey: key) }, recheck: recheck, load: loader.load(key, load),
            store: loader.store(key))
    }

    /// The body of a plain single-key load call after its caller read `key` itself and missed, having read
    /// the coordinator's change sequence, `sequenceSeen`, before that read.
    @usableFromInline
    func hostedValue(
        afterMissOf key: Key, sequenceSeen: UInt64, host: LoadHost<Key, Value>, expiry: Expiry?, tags: Set<String>,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let loader = HostedLoader(host: host, clock: clock, expiry: expiry, tags: tags, options: LoadOptions())
        return try await host.coordinator.value(
            afterMissOf: key, sequenceSeen: sequenceSeen,
            recheck: { [weak self] in try? await self?.value(forKey: key) }, load: loader.load(key, load),
            store: loader.store(key))
    }

    /// The body of every bulk load call.
    @usableFromInline
    func hostedValues(
        forKeys keys: [Key], expiry: Expiry?, tags: Set<String>, options: LoadOptions,
        orLoad loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
    ) async throws -> [Key: Value] {
        let host = loadHost
        let loader = HostedLoader(host: host, clock: clock, expiry: expiry, tags: tags, options: options)
        let recheck: @Sendable (Key) async -> Value? = { [weak self] key in try? await self?.value(forKey: key) }
        guard options.hasNoBehaviour else {
            return try await host.coordinator.values(
                forKeys: keys, options: options, clock: loader.clock, expiry: loader.expiry,
                read: { keys in try await self.entriesReadOnce(forKeys: keys) },
                readStale: { key in try await self.entryIncludingStale(forKey: key) }, recheck: recheck,
                loadBatch: loader.loadBatch(loadBatch), store: loader.storeBatch())
        }
        return try await host.coordinator.values(
            forKeys: keys, read: { keys in try await self.values(forKeys: keys) }, recheck: recheck,
            loadBatch: loader.loadBatch(loadBatch), store: loader.storeBatch())
    }

    /// The body of a plain bulk load call after its caller read the keys itself: `found` what it found,
    /// `missing` the distinct keys it lacked, `sequenceSeen` the change sequence read before the read.
    @usableFromInline
    func hostedValues(
        loading missing: [Key], found: [Key: Value], sequenceSeen: UInt64, host: LoadHost<Key, Value>,
        expiry: Expiry?, tags: Set<String>, orLoad loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
    ) async throws -> [Key: Value] {
        let loader = HostedLoader(host: host, clock: clock, expiry: expiry, tags: tags, options: LoadOptions())
        return try await host.coordinator.values(
            loading: missing, found: found, sequenceSeen: sequenceSeen,
            recheck: { [weak self] key in try? await self?.value(forKey: key) },
            loadBatch: loader.loadBatch(loadBatch), store: loader.storeBatch())
    }
}

/// One load call's loader and store, around the caller's loader: notes the tier's stamps (tag versions, a
/// ticket) before the loader runs, when the load needs them, and builds the stored entry — expiry resolved when
/// the load finishes, stale retention from the options, the tags — for the tier's store, which alone decides
/// what is kept.
struct HostedLoader<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    let host: LoadHost<Key, Value>
    let clock: any CacheClock
    /// The loaded values' expiry, the tier's default resolved.
    let expiry: Expiry
    let tags: Set<String>
    let options: LoadOptions
    /// The stamps noted by this call's loads, by key (a key without one is not stored); `nil` when the loads
    /// need none, which a plain load of a tier without cross-process fences never does, so that it pays no
    /// allocation and no call for them.
    let stamps: Locked<[Key: LoadStamp]>?

    init(host: LoadHost<Key, Value>, clock: any CacheClock, expiry: Expiry?, tags: Set<String>, options: LoadOptions) {
        self.host = host
        self.clock = clock
        self.expiry = expiry ?? host.defaultExpiry
        self.tags = tags
        self.options = options
        stamps = tags.isEmpty && !host.stampsEveryLoad ? nil : Locked([:])
    }

    /// `load`, after noting `key`'s stamp.
    func load(_ key: Key, _ load: @escaping @Sendable () async throws -> Value) -> @Sendable () async throws -> Value {
        guard let stamps else { return load }
        return { [host, tags] in
            let noted = await host.stamp([key], tags)
            stamps.withLock { $0.merge(noted) { _, new in new } }
            return try await load()
        }
    }

    /// `loadBatch`, after noting the stamps of the keys it is given.
    func loadBatch(
        _ loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
    ) -> @Sendable ([Key]) async throws -> [Key: Value] {
        guard let stamps else { return loadBatch }
        return { [host, tags] keys in
            let noted = await host.stamp(keys, tags)
            stamps.withLock { $0.merge(noted) { _, new in new } }
            return try await loadBatch(keys)
        }
    }

    /// The store of `key`'s loaded value.
    func store(_ key: Key) -> @Sendable (UInt64, Value) async -> Void {
        { [self] loadID, value in await store(loadID, key, value) }
    }

    /// The store of a loaded value, for a batch.
    func storeBatch() -> @Sendable (UInt64, Key, Value) async -> Void {
        { [self] loadID, key, value in await store(loadID, key, value) }
    }

    /// Stores a loaded value: the entry, built now, handed to the tier with the key's stamp.
    private func store(_ loadID: UInt64, _ key: Key, _ value: Value) async {
        let stamp: LoadStamp
        if let stamps {
            guard let noted = stamps.withLock({ $0[key] }) else { return }
            stamp = noted
        } else {
            stamp = LoadStamp()
        }
        // An entry that never expires reads no clock.
        let expiresAt: Date? = if case .never = expiry { nil } else { expiry.expirationDate(from: clock.now) }
        let entry = CacheEntry(
            value: value, expiresAt: expiresAt, staleUntil: options.staleUntil(expiringAt: expiresAt), tags: tags)
        await host.store(loadID, key, entry, stamp)
    }
}

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

// MARK: - The reads each call hands the one implementation (`LoadHost+Loading.swift`)

extension LoadHostingCache {
    /// The body of every single-key load call: the cache's reads, as closures, for the host.
    @usableFromInline
    func hostedValue(
        forKey key: Key, expiry: Expiry?, tags: Set<String>, options: LoadOptions,
        orLoad load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        try await loadHost.value(
            forKey: key, clock: clock, expiry: expiry, tags: tags, options: options,
            read: { try await self.value(forKey: key) },
            readIncludingStale: { try await self.entryIncludingStale(forKey: key) },
            recheck: { [weak self] in try? await self?.value(forKey: key) }, load: load)
    }

    /// The body of every bulk load call: the cache's reads, as closures, for the host.
    @usableFromInline
    func hostedValues(
        forKeys keys: [Key], expiry: Expiry?, tags: Set<String>, options: LoadOptions,
        orLoad loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
    ) async throws -> [Key: Value] {
        try await loadHost.values(
            forKeys: keys, clock: clock, expiry: expiry, tags: tags, options: options,
            read: { keys in try await self.entriesReadOnce(forKeys: keys) },
            readIncludingStale: { key in try await self.entryIncludingStale(forKey: key) },
            recheck: { [weak self] key in try? await self?.value(forKey: key) }, loadBatch: loadBatch)
    }
}

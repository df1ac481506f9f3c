#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The one implementation of every load call of a `LoadHostingCache` (the calls are in
// `LoadHostingCache+Loading.swift` and `+Synchronous.swift`): what each call does around the coordinator, given
// the cache's reads as closures. On the host, generic over its key and value, so that a synchronous tier's fast
// path, specialized for its types, hands a miss over without the cost of code generic over the cache type.
extension LoadHost {
    /// A single-key load: plain (`options` with no behaviour) through
    /// ``CoordinatorStorage/value(forKey:read:recheck:load:store:)``, otherwise through the resilient
    /// ``CoordinatorStorage/value(forKey:options:clock:expiry:read:recheck:load:store:)``.
    ///
    /// - Parameters:
    ///   - read: The cache's read of `key`, fresh only.
    ///   - readIncludingStale: The cache's read of `key`, fresh or stale (with options).
    ///   - recheck: The read a load makes before its loader when the key changed since the caller's read.
    @usableFromInline
    package func value(
        forKey key: Key, clock: any CacheClock, expiry: Expiry?, tags: Set<String>, options: LoadOptions,
        read: () async throws -> Value?,
        readIncludingStale: () async throws -> CacheEntry<Value>?,
        recheck: @escaping @Sendable () async -> Value?,
        load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let loader = HostedLoader(host: self, clock: clock, expiry: expiry, tags: tags, options: options)
        guard options.hasNoBehaviour else {
            return try await coordinator.value(
                forKey: key, options: options, clock: clock, expiry: loader.expiry, read: readIncludingStale,
                recheck: recheck, load: loader.load(key, load), store: loader.store(key),
                isLeased: isLeased.map { isLeased in { await isLeased(key) } })
        }
        return try await coordinator.value(
            forKey: key, read: read, recheck: recheck, load: loader.load(key, load), store: loader.store(key))
    }

    /// A plain single-key load after the caller read `key` itself and missed, having read
    /// ``changeSequence`` (`sequenceSeen`) before that read.
    @usableFromInline
    package func value(
        afterMissOf key: Key, sequenceSeen: UInt64, clock: any CacheClock, expiry: Expiry?, tags: Set<String>,
        recheck: @escaping @Sendable () async -> Value?,
        load: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let loader = HostedLoader(host: self, clock: clock, expiry: expiry, tags: tags, options: LoadOptions())
        return try await coordinator.value(
            afterMissOf: key, sequenceSeen: sequenceSeen, recheck: recheck, load: loader.load(key, load),
            store: loader.store(key))
    }

    /// A bulk load: plain through ``CoordinatorStorage/values(forKeys:read:recheck:loadBatch:store:)``,
    /// otherwise through ``CoordinatorStorage/values(forKeys:options:clock:expiry:read:readStale:recheck:loadBatch:store:)``.
    ///
    /// - Parameters:
    ///   - read: The cache's bulk read of live entries.
    ///   - readIncludingStale: The cache's read of one key, fresh or stale (with options).
    ///   - recheck: The read a key's load makes first when the key changed since the caller's read.
    @usableFromInline
    package func values(
        forKeys keys: [Key], clock: any CacheClock, expiry: Expiry?, tags: Set<String>, options: LoadOptions,
        read: ([Key]) async throws -> [Key: CacheEntry<Value>],
        readIncludingStale: (Key) async throws -> CacheEntry<Value>?,
        recheck: @escaping @Sendable (Key) async -> Value?,
        loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
    ) async throws -> [Key: Value] {
        let loader = HostedLoader(host: self, clock: clock, expiry: expiry, tags: tags, options: options)
        guard options.hasNoBehaviour else {
            return try await coordinator.values(
                forKeys: keys, options: options, clock: clock, expiry: loader.expiry, read: read,
                readStale: readIncludingStale, recheck: recheck, loadBatch: loader.loadBatch(loadBatch),
                store: loader.storeBatch())
        }
        return try await coordinator.values(
            forKeys: keys, read: { keys in try await read(keys).mapValues(\.value) }, recheck: recheck,
            loadBatch: loader.loadBatch(loadBatch), store: loader.storeBatch())
    }

    /// A plain bulk load of `missing` (distinct keys) after the caller read the keys itself: `found` what it
    /// found, `sequenceSeen` ``changeSequence`` read before that read.
    @usableFromInline
    package func values(
        loading missing: [Key], found: [Key: Value], sequenceSeen: UInt64, clock: any CacheClock, expiry: Expiry?,
        tags: Set<String>,
        recheck: @escaping @Sendable (Key) async -> Value?,
        loadBatch: @escaping @Sendable ([Key]) async throws -> [Key: Value]
    ) async throws -> [Key: Value] {
        let loader = HostedLoader(host: self, clock: clock, expiry: expiry, tags: tags, options: LoadOptions())
        return try await coordinator.values(
            loading: missing, found: found, sequenceSeen: sequenceSeen, recheck: recheck,
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

    /// `load`, after this process's turn to load `key` (on a tier that shares loads across processes) and
    /// noting `key`'s stamp. A value another process stored meanwhile is returned without loading, and with no
    /// stamp, so it is not stored again.
    func load(_ key: Key, _ load: @escaping @Sendable () async throws -> Value) -> @Sendable () async throws -> Value {
        guard let stamps else { return load }
        return { [host, tags] in
            var release: @Sendable () -> Void = {}
            if let turn = host.turn {
                switch await turn(key) {
                case .landed(let entry): return entry.value
                case .load(let give): release = give
                }
            }
            var noted = await host.stamp([key], tags)
            // A key without a stamp is not stored: its lease has nothing to wait for.
            if noted[key] == nil { release() } else { noted[key]?.release = release }
            stamps.withLock { $0.merge(noted) { _, new in new } }
            do {
                return try await load()
            } catch {
                release()
                throw error
            }
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
        let now: Date? = if case .never = expiry { nil } else { clock.now }
        let expiresAt = now.flatMap { expiry.expirationDate(from: $0) }
        let entry = CacheEntry(
            value: value, expiresAt: expiresAt, staleUntil: options.staleUntil(expiringAt: expiresAt), tags: tags)
        await host.store(loadID, key, entry, stamp, now)
        // After the store: a waiter that finds the lease free and no entry takes it over.
        stamp.release?()
    }
}

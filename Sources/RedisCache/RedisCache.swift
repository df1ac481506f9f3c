import CacheCore
import CacheCrypto
import RedisConnection
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A cache tier on a Redis (≥ 6.2) or Valkey server, shared by every process that names the same server,
/// namespace and master key; values are sealed with AES-256-GCM before they leave the process.
///
/// ```swift
/// var configuration = try RedisCacheConfiguration(url: "redis://127.0.0.1:6379/thumbnails")
/// configuration.masterKeySource = .masterKeyFile(URL(fileURLWithPath: "/etc/strata/thumbnails.key"))
/// let redis = try RedisCache<String, Data>(configuration: configuration)
/// try await redis.setValue(bytes, forKey: "avatar:42", expiry: .minutes(10))
/// let cached = try await redis.value(forKey: "avatar:42")
/// ```
///
/// - **What Redis sees.** Key names are `strata:v2:<namespace>:k:{…}` around a 128-bit keyed HMAC of the
///   key's canonical bytes (the braces a Redis Cluster hash tag); values are sealed envelopes (epoch, expiry, cost, nonce, ciphertext, tag) whose
///   ciphertext holds the full key and the value. Nothing of a key or value is in plaintext.
/// - **Reads** are one `MGET` of the epoch counter and the entry (on a cluster, a `GET` of each, sent to their
///   primaries concurrently). A value that does not open (tampered,
///   copied to another key or namespace, given another expiry) is a miss, counted in
///   ``RedisCacheHealth/corruptEntries`` and reported to the observer, and is never deleted.
/// - **Writes** are one `SET … PX <remaining ms>`, the time left before the entry's absolute expiry on
///   the tier's clock (entries without one get ``RedisCacheConfiguration/maximumTimeToLive``). An entry
///   already expired is not written and removes the key. Encoded values over
///   ``RedisCacheConfiguration/maximumValueSize`` are refused with `CacheError.Code.entryTooLarge`.
/// - **`removeAll()`** is one `INCR` of the namespace's epoch: O(1) at any size. Entries sealed under an
///   older epoch no longer open and leave with their TTL or Redis's eviction.
/// - **A wrong master key** is told from damage by a key-check record in the namespace: every operation
///   then throws `CacheError.Code.wrongMasterKey`, and nothing is deleted.
/// - **Failures.** Commands have deadlines (connect 250 ms, read 50 ms, write 100 ms by default); a server
///   that keeps failing opens a circuit breaker, and operations then fail at once, without a system call,
///   until a background probe reconnects. Failures are `CacheError`s with the `RedisError` as
///   ``CacheError/cause``: `.deadlineExceeded`, `.unavailable` (refused, lost, loading, breaker open),
///   `.unsupportedServer` (sentinel, replica, read-only), `.outOfSpace` for `-OOM`, `.permissionDenied` for
///   refused credentials, `.io` for anything else (a malformed reply, another error reply).
///
/// - **Coherence.** Under a faster tier of a `MultiCache`, the tier opens a second connection running
///   `CLIENT TRACKING … BCAST` and reports every write other clients make to the namespace
///   (``addInvalidationObserver(_:)``), so the copies above are dropped; see
///   ``RedisCacheConfiguration/tracksInvalidations``.
/// - **Redis Cluster.** Pointed at any node of a cluster (primary or replica; more than one with
///   ``RedisCacheConfiguration/fallbackAddresses``), the tier finds the cluster at its first command and from
///   then on sends each command to the primary of its key's slot, following `MOVED` and `ASK`, reading the
///   slot map again after a failover or a resharding, and tracking invalidations on every primary; see
///   ``RedisCacheHealth/isCluster`` and Docs/RedisCache.md, "Redis Cluster".
///
/// Thread safety: every method may be called from any task or thread at once. Requests share one
/// connection (pipelined), or ``RedisCacheConfiguration/connectionCount`` of them; socket I/O runs on each
/// connection's own thread, never on the cooperative pool.
public final class RedisCache<Key: CacheKey, Value: Sendable>: Cache, Sendable {
    /// The settings the cache was created with.
    public let configuration: RedisCacheConfiguration
    /// The clock that decides expiry.
    public var clock: any CacheClock { configuration.clock }

    let keys: NamespaceKeys
    let codec: ValueCodec<Value>
    /// The server's connections, or the cluster's once the server turned out to be a cluster node.
    let route: ServerRoute
    let state = Locked(RedisTierState())
    /// Observers of invalidations, the tracking connection and the names it maps back to keys.
    let invalidations: InvalidationHub<Key>
    /// The background purge of older epochs (RedisCache+Purge.swift) and its completed ticks.
    let purgeTask = Locked<Task<Void, Never>?>(nil)
    let purgeTicks = Locked(0)
    /// Load-once for `value(forKey:expiry:tags:options:orLoad:)` and its bulk form, created by the first load
    /// (RedisCache+LoadHosting.swift).
    let loadOnce = TierLoadOnce<Key, Value>()

    /// Creates the tier. It connects on first use, not here.
    ///
    /// - Parameters:
    ///   - configuration: Server, namespace, master key and limits.
    ///   - codec: Turns values into bytes and back.
    /// - Throws: `CacheError` `.invalidArgument` for a bad setting, including TLS files that cannot be
    ///   loaded (a missing or unreadable CA file, client certificate or key, a key that does not match its
    ///   certificate) and TLS on a platform without it yet; what loading the master key throws
    ///   (`.invalidMasterKey`, `.permissionDenied`, `.io`, …); `.io` when no connection thread can start.
    public init(configuration: RedisCacheConfiguration, codec: ValueCodec<Value>) throws {
        try configuration.validate()
        let master = try MasterKeyLoader.load(
            configuration.masterKeySource, storeName: configuration.masterKeyStoreName)
        do {
            keys = try NamespaceKeys(namespace: configuration.namespace, master: master)
        } catch let error as CacheError {
            throw error
        } catch {
            throw CacheError(.crypto, "cannot derive the namespace's subkeys: \(error)", cause: error)
        }
        self.configuration = configuration
        self.codec = codec
        let tls = try Self.tlsContext(configuration.tls)
        invalidations = InvalidationHub(
            settings: Self.trackingSettings(configuration, prefix: keys.prefix, epochKey: keys.epochKey, tls: tls),
            epochKey: keys.epochKey,
            entryPrefix: keys.entryPrefix, tagPrefix: keys.tagPrefix, trackedKeyLimit: configuration.trackedKeyLimit)
        var connectionConfiguration = RedisConnection.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.username,
            password: configuration.password, clientName: "strata",
            connectTimeout: configuration.connectTimeout, readTimeout: configuration.readTimeout,
            writeTimeout: configuration.writeTimeout, keepAliveInterval: configuration.keepAliveInterval)
        connectionConfiguration.fallbackAddresses = configuration.fallbackAddresses.map {
            RedisConnection.Address(host: $0.host, port: $0.port)
        }
        connectionConfiguration.tls = tls
        connectionConfiguration.decoderLimits.maximumBulkLength =
            configuration.maximumValueSize + Self.maximumKeySize + Envelope.overhead
        do {
            let pool = try ConnectionPool(count: configuration.connectionCount, configuration: connectionConfiguration)
            let cluster = Self.clusterConfiguration(
                configuration, node: connectionConfiguration, invalidations: invalidations)
            route = ServerRoute(pool: pool, cluster: cluster)
        } catch {
            let error = RedisError(error)
            throw CacheError(.io, "cannot start the Redis connections: \(error)", cause: error)
        }
        startPurging()
    }

    deinit { stopPurging() }

    /// The longest canonical key, in bytes (64 KiB); longer keys are refused with `entryTooLarge`.
    public static var maximumKeySize: Int { 64 << 10 }

    /// Counters since this instance was created: hits, misses, insertions, expirations (reads that found
    /// an expired entry), and the loads of its load-once calls (`loads`, `loadsShared`). `count` and
    /// `totalCost` are 0: the server's share of a namespace is not counted.
    public var statistics: CacheStatistics {
        var statistics = state.withLock { $0.statistics }
        loadOnce.count(into: &statistics)
        return statistics
    }

    /// Connection and integrity counters, beside ``statistics``.
    public var health: RedisCacheHealth {
        let connectionStatistics = route.statistics
        let open = route.isUnavailable
        let tracking = invalidations.snapshot
        var health = state.withLock { state in
            RedisCacheHealth(
                connects: connectionStatistics.connects, reconnects: connectionStatistics.reconnects,
                deadlineMisses: connectionStatistics.deadlineMisses,
                breakerOpenings: connectionStatistics.breakerOpenings,
                rejectedWhileOpen: connectionStatistics.rejectedWhileOpen, isBreakerOpen: open,
                corruptEntries: state.corruptEntries, staleEpochEntries: state.staleEpochEntries,
                confirmedFences: state.confirmedFences, unconfirmedFences: state.unconfirmedFences)
        }
        health.isTracking = tracking.isTracking
        health.trackingConnects = tracking.counters.trackingConnects
        health.trackingLosses = tracking.counters.trackingLosses
        health.keysInvalidated = tracking.counters.keysInvalidated
        health.fullInvalidations = tracking.counters.fullInvalidations
        if let cluster = route.cluster { addClusterHealth(cluster, to: &health) }
        return health
    }

    /// Closes the connection and the tracking connection, if open; later operations fail with
    /// `CacheError.Code.io`. Returns once their threads have exited. Optional: both also close when the
    /// cache is released.
    public func close() async {
        stopPurging()
        await invalidations.close()
        await route.close()
    }

    /// Returns the live entry for `key`, or `nil` on a miss.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The entry with its absolute expiry and cost; `nil` when absent, expired, sealed under an
    ///   older epoch, or unopenable (counted as corrupt).
    /// - Throws: `CacheError` `.wrongMasterKey` when the namespace belongs to another master key; `.io` when
    ///   the server cannot be reached in time; `.codec` when the codec fails; `CancellationError`.
    /// - Complexity: One round trip (`MGET`), plus O(*m*) decryption of the value.
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? {
        try await readEntry(forKey: key, includingStale: false)
    }

    /// The one read of a single key, for ``entry(forKey:)`` and ``entryIncludingStale(forKey:)``.
    ///
    /// The name is registered before the read: MultiCache writes a hit (or a stale value a load serves)
    /// back into the tiers above, and a later write elsewhere must reach that copy.
    func readEntry(forKey key: Key, includingStale: Bool) async throws -> CacheEntry<Value>? {
        try await verifyMasterKey()
        let keyBytes = try Self.canonicalBytes(of: key)
        let name = try entryName(keyBytes)
        invalidations.track(name, for: key)
        let items = try await values(of: [keys.epochKey, name])
        let epoch = try await effectiveEpoch(try Self.counterValue(items[0]))
        guard case .bulkString(let bytes) = items[1] else { return countMiss() }
        return try await open(
            bytes, keyBytes: keyBytes, name: name, currentEpoch: epoch, includingStale: includingStale)
    }

    /// Reads the value stored under `key`: ``entry(forKey:)`` without the metadata.
    ///
    /// - Parameter key: The key to look up.
    /// - Returns: The value, or `nil` when ``entry(forKey:)`` finds none.
    /// - Throws: What ``entry(forKey:)`` throws.
    /// - Complexity: That of ``entry(forKey:)``.
    public func value(forKey key: Key) async throws -> Value? {
        try await valueThroughEntry(forKey: key)
    }

    /// Stores `value` under `key` until `expiry` (`nil`: ``Expiry/never``, capped by
    /// ``RedisCacheConfiguration/maximumTimeToLive`` on the server), through ``setEntry(_:forKey:)``.
    ///
    /// - Parameters:
    ///   - value: The value to store.
    ///   - key: The key.
    ///   - expiry: When the entry expires, resolved against ``clock`` now.
    /// - Throws: What ``setEntry(_:forKey:)`` throws.
    /// - Complexity: That of ``setEntry(_:forKey:)``.
    public func setValue(_ value: Value, forKey key: Key, expiry: Expiry? = nil) async throws {
        try await setValueThroughEntry(value, forKey: key, expiry: expiry)
    }

    /// Stores `entry` under `key` with `SET … PX`, the time left before its expiry.
    ///
    /// An entry already expired is not written and removes the key.
    ///
    /// - Parameters:
    ///   - entry: The value with its absolute expiry and cost.
    ///   - key: The key.
    /// - Throws: `CacheError` `.entryTooLarge` for a value over ``RedisCacheConfiguration/maximumValueSize``
    ///   or a key over ``maximumKeySize``; `.invalidArgument` for a tag over 65,535 bytes of UTF-8 or more
    ///   than 65,535 tags (Docs/Tags.md, "The tag rule"; nothing is sent); `.codec`; `.outOfSpace` when the
    ///   server refuses with `-OOM`; `.wrongMasterKey`; `.io`; `CancellationError`.
    /// - Complexity: One round trip, two when the cached epoch is older than
    ///   ``RedisCacheConfiguration/epochRefreshInterval``; O(*m*) encryption.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) async throws {
        try TagBlock.validate(entry.tags)
        try await verifyMasterKey()
        // A tagged entry is stamped with its tags' versions now (one `MGET` more).
        let versions = entry.tags.isEmpty ? nil : try await stampingTagVersions(of: entry.tags)
        try await loadOnce.fenced(key) { try await write(entry, forKey: key, tagVersions: versions) }
    }

    /// Seals and stores `entry`, with a tag block of `tagVersions` when it has tags; with a `fence`, sealed
    /// under the fence's epoch and stored only while the key's removal counter holds the fence's value
    /// (nothing is sent for an expired entry then). Returns whether it stored.
    @discardableResult
    func write(
        _ entry: CacheEntry<Value>, forKey key: Key, tagVersions: [String: UInt64]?, fence: CacheLoadTicket? = nil
    ) async throws -> Bool {
        let keyBytes = try Self.canonicalBytes(of: key)
        // Named before the size checks: a tier above may keep a copy this tier refused, and removals of
        // the key elsewhere must still reach it.
        let name = try entryName(keyBytes)
        invalidations.track(name, for: key)
        guard keyBytes.count <= Self.maximumKeySize else {
            throw CacheError(
                .entryTooLarge, "the key's canonical bytes (\(keyBytes.count)) exceed \(Self.maximumKeySize) bytes")
        }
        var value: Data
        do {
            value = try codec.encode(entry.value)
        } catch {
            throw CacheError(.codec, "cannot encode the value: \(error)", cause: error)
        }
        guard value.count <= configuration.maximumValueSize else {
            throw CacheError(
                .entryTooLarge,
                "a value of \(value.count) bytes exceeds the Redis tier's maximum of \(configuration.maximumValueSize)")
        }
        // The server keeps the entry until it is gone for good: its stale-until instant when it has one.
        guard timeToLive(for: entry.expiresAt) != nil, let milliseconds = timeToLive(for: entry.retainedUntil) else {
            if fence == nil { _ = try await send(RESPCommand(arguments: [Array("UNLINK".utf8), name]), key: name) }
            return false
        }
        let epoch: UInt64
        if let fence { epoch = fence.epoch } else { epoch = try await epochForWriting() }
        if let tagVersions { value = try TagBlock.encode(tagVersions) + value }
        let sealed: [UInt8]
        do {
            sealed = try Envelope.seal(
                value: value, keyBytes: keyBytes,
                header: Envelope.Header(
                    epoch: epoch, expiresAt: entry.expiresAt, cost: entry.cost, staleUntil: entry.staleUntil,
                    hasTags: tagVersions != nil),
                namespace: keys.namespace, redisKey: name, subkey: keys.sealing)
        } catch {
            throw CacheError(.crypto, "cannot seal the entry: \(error)", cause: error)
        }
        if let fence {
            guard try await storeFenced(sealed, name: name, milliseconds: milliseconds, keyVersion: fence.keyVersion)
            else { return false }
        } else {
            _ = try await send(
                RESPCommand(arguments: [
                    Array("SET".utf8), name, sealed, Array("PX".utf8), Array(String(milliseconds).utf8),
                ]), key: name)
        }
        state.withLock { $0.statistics.insertions += 1 }
        return true
    }

    /// Removes the entry for `key` and advances the key's removal counter, in one script: a load of `key`
    /// that began before, in any process, can no longer store its result through
    /// ``setEntry(_:forKey:ticket:)`` (Docs/RedisCache.md, "Load fencing and leases").
    ///
    /// - Parameter key: The key.
    /// - Throws: `CacheError` `.wrongMasterKey`; `.io`; `CancellationError`.
    /// - Complexity: One round trip (`EVAL`).
    public func removeEntry(forKey key: Key) async throws {
        try await verifyMasterKey()
        let name = try entryName(try Self.canonicalBytes(of: key))
        invalidations.track(name, for: key)
        try await loadOnce.fenced(key) { try await removeAndAdvance(name) }
    }

    /// Removes every entry of the namespace, for every process sharing it, with one `INCR` of its epoch.
    ///
    /// Entries sealed under the older epoch no longer open, in this process or any other; Redis drops
    /// them with their TTL or by eviction. Writes sealed by a process that has not yet seen the new
    /// epoch are misses too.
    ///
    /// - Throws: `CacheError` `.wrongMasterKey` (the epoch of another key holder's namespace is never
    ///   advanced); `.io`; `CancellationError`.
    /// - Complexity: O(1) at any number of entries: one round trip.
    public func removeAll() async throws {
        try await verifyMasterKey()
        let sealedWith = state.withLock { $0.epoch }
        // `INCR`, or a fresh random base when the counter is missing (never 1: counting again from 0 would
        // reach the epochs of entries cleared before the counter was lost).
        let value = try await loadOnce.fenced(nil) { try await advanceCounter(keys.epochKey) }
        // A counter that did not pass the epoch this instance sealed with was lost (FLUSHDB, eviction):
        // pushed past it, so this clear reaches this instance's own writes too.
        _ = try await repairEpoch(value, above: sealedWith, strictly: true)
    }

}

/// What one `RedisCache` instance keeps between calls. Outside the generic class on purpose: nested in it,
/// the type was generic over the key and value, and every lock of it looked its metadata up at run time
/// (about 500 instructions per read, measured with callgrind).
struct RedisTierState {
    var statistics = CacheStatistics()
    var corruptEntries = 0
    var staleEpochEntries = 0
    var confirmedFences = 0
    var unconfirmedFences = 0
    /// The replicas the server's `ROLE` listed, and when it was asked (fence confirmation).
    var replicas: (count: Int, askedAt: ContinuousClock.Instant)?
    var epoch: UInt64 = 0
    var epochReadAt: ContinuousClock.Instant?
    var masterKeyVerified = false
    /// What woke ``RedisCache/waitForEntry(forKey:until:pollInterval:)``'s checks.
    var wakes = RedisWakeCounts()
    var leaseTurns = RedisLeaseTurns()
    /// The leases this instance's load turns hold, by lease key, until the load's fenced store or its release
    /// gives them up.
    var heldLeases: [[UInt8]: RedisLease] = [:]
    /// Removal counters a lease's script read for the ticket of the load that took it, by counter key.
    var prefetchedCounters: [[UInt8]: UInt64] = [:]
}

extension RedisCache where Value == Data {
    /// Creates a tier that stores `Data` unchanged.
    ///
    /// - Parameter configuration: Server, namespace, master key and limits.
    /// - Throws: What ``init(configuration:codec:)`` throws.
    public convenience init(configuration: RedisCacheConfiguration) throws {
        try self.init(configuration: configuration, codec: .data)
    }
}

extension RedisCache where Value: Codable {
    /// Creates a tier that stores `Codable` values as JSON.
    ///
    /// - Parameter configuration: Server, namespace, master key and limits.
    /// - Throws: What ``init(configuration:codec:)`` throws.
    public convenience init(configuration: RedisCacheConfiguration) throws {
        try self.init(configuration: configuration, codec: .json())
    }
}

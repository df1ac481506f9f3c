import CacheCore
import CacheCrypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where a ``RedisCache`` finds its server, which namespace it owns there, how its entries are sealed and
/// how long it waits.
///
/// ```swift
/// var configuration = try RedisCacheConfiguration(url: "redis://127.0.0.1:6379/thumbnails")
/// configuration.masterKeySource = .masterKeyFile(URL(fileURLWithPath: "/etc/strata/thumbnails.key"))
/// let cache = try RedisCache<String, Data>(configuration: configuration)
/// ```
///
/// Every process that names the same server, namespace and master key shares one cache.
///
/// Thread safety: a plain value; `Sendable`.
public struct RedisCacheConfiguration: Sendable {
    /// The server's host name or address. Default `127.0.0.1`.
    public var host: String
    /// The server's TCP port. Default 6379.
    public var port: Int
    /// The ACL user sent with `HELLO … AUTH`; `nil` with a password means `default`.
    public var username: String?
    /// The password; `nil` sends no credentials.
    public var password: String?
    /// The namespace: every Redis key this cache writes starts with `strata:v2:<namespace>:`. 1 to 64
    /// characters from `A-Z a-z 0-9 . _ -`, checked when the cache is created.
    public var namespace: String
    /// Where the master key comes from (the same sources as the disk tier). A generated key file is
    /// named for the namespace: ``MasterKeySource/defaultMasterKeyFile`` is `redis.<namespace>.key` in the
    /// per-user keys folder, and ``MasterKeySource/keychain(service:)`` uses the account
    /// `redis.<namespace>`. Every process sharing the namespace needs the same key. Default
    /// ``MasterKeySource/platformDefault``.
    public var masterKeySource: MasterKeySource
    /// How long `connect(2)` may take. Default 250 ms.
    public var connectTimeout: Duration
    /// How long a written command may wait for its reply. Default 50 ms.
    public var readTimeout: Duration
    /// How long a queued command may wait to be written. Default 100 ms.
    public var writeTimeout: Duration
    /// Idle time before a keep-alive `PING`. Default 500 ms.
    public var keepAliveInterval: Duration
    /// The largest encoded value this tier stores, in bytes; larger ones are refused with
    /// `CacheError.Code.entryTooLarge`. Default 1 MiB.
    public var maximumValueSize: Int
    /// The server-side time to live given to entries without an expiry, and the longest any entry is
    /// kept: 1 ms to 100 years. Default 7 days.
    public var maximumTimeToLive: Duration
    /// How long a cached namespace epoch is trusted by writes before it is read again; reads refresh it
    /// for free. Default 1 s.
    public var epochRefreshInterval: Duration
    /// The clock that decides expiry. Default ``SystemClock``.
    public var clock: any CacheClock
    /// Receives corrupt entries and other events that do not fail a call; `nil` for none.
    public var observer: CacheObserver?
    /// The most key names the tier remembers to map invalidations back to keys (see
    /// ``RedisCache/addInvalidationObserver(_:)``); about 200 bytes each. Keep it at least the number of
    /// entries the tiers above can hold: once names are dropped, a change to a key this process forgot
    /// is published as `.all`. Default 100,000.
    public var trackedKeyLimit = 100_000
    /// Whether the tier publishes invalidations (``RedisCache/addInvalidationObserver(_:)``), so that a
    /// `MultiCache` drops copies above it that another process changed. The price of coherence: losing
    /// the tracking connection (the server dies, restarts or is unreachable) flushes the tiers above at
    /// once and again when tracking is back. Turn it off when the tiers above must keep serving through
    /// a Redis outage and may serve values other processes changed, until they expire. Default `true`.
    public var tracksInvalidations = true
    /// How many data connections the tier opens to the server, 1 to 16 (the tracking connection is
    /// extra). Each request goes to the one with the fewest requests in flight, so with more than one, a
    /// large value being written or read does not hold up small requests behind it. Each connection
    /// pipelines, reconnects and keeps its own circuit breaker. Default 1, which suits most processes:
    /// one connection already pipelines every concurrent request.
    public var connectionCount = 1
    /// How often a background task removes a batch of entries sealed under an older epoch (left by
    /// ``RedisCache/removeAll()``), or `nil` for never. Each tick runs one `SCAN … MATCH
    /// strata:v2:<namespace>:k:* COUNT 100` step and `UNLINK`s what it found of older epochs: bounded
    /// work, about 100 keys looked at per tick, resuming where the last tick stopped. Entries of older
    /// epochs are never served either way; the purge only frees their memory before their TTL or
    /// eviction does. Timed by ``clock``. Must be positive. Default `nil`; see
    /// ``RedisCache/purgeOldEpochs()`` for a pass on demand.
    public var purgeInterval: Duration?
    /// Addresses tried, in order, when ``host``:``port`` cannot be used: it refuses or times out the
    /// connect, or its handshake fails (a replica after a failover, a server still loading). Every
    /// connect starts over from ``host``:``port``, so the tier returns to it once it accepts again. Each
    /// address has its own ``connectTimeout``. The tracking connection uses the same list. Default none.
    public var fallbackAddresses: [Address] = []
    /// How long a fence — the counter advance of ``RedisCache/removeAll()`` or of a tag's removal — waits
    /// for a replica to acknowledge it (`WAIT 1`), or `nil` to never wait. Only a server that lists
    /// replicas (`ROLE`, asked in the same round trip as the advance) is waited on; a standalone server
    /// costs nothing more. Replication is asynchronous: a failover to a replica that lacks the advance undoes
    /// it, and what it removed opens again for processes that never saw the higher counter. A confirmed
    /// fence survives such a failover; one no replica acknowledged in time is counted in
    /// ``RedisCacheHealth/unconfirmedFences`` and still succeeds, as does one whose `WAIT` or `ROLE` the server
    /// refuses or fails. Must be positive; the wait is capped at half of ``readTimeout`` (a reply held up to
    /// the read deadline would close the connection): 25 ms at the default 50 ms read deadline, none under
    /// 2 ms. Default 100 ms.
    public var fenceConfirmationTimeout: Duration? = .milliseconds(100)
    /// TLS for every connection of the tier (data and tracking), or `nil` (the default) for plain TCP; a
    /// `rediss://` URL sets it to `TLS()`, which verifies against the system's trust store. See ``TLS`` for
    /// what is verified.
    public var tls: TLS?
    /// How a load that several processes start at once runs once across all of them (see ``LoadLease``), or
    /// `nil` to load once per process only. Default `LoadLease()`: a 10-second lease.
    public var loadLease: LoadLease? = LoadLease()
    /// The port the tracking connection uses instead of ``port``; for tests that put a fault proxy in
    /// front of it alone.
    package var trackingPort: Int?
    /// Added to every server-side TTL; for tests whose injected clock stands still while the server's
    /// runs (the sealed expiry, judged by ``clock``, still decides what a read returns). Default zero.
    package var serverTimeToLivePadding: Duration = .zero

    /// The longest namespace, in characters.
    public static let maximumNamespaceLength = 64

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - host: Host name or address.
    ///   - port: TCP port.
    ///   - username: ACL user, or `nil`.
    ///   - password: Password, or `nil`.
    ///   - namespace: The namespace (validated when the cache is created).
    ///   - masterKeySource: Where the master key comes from.
    ///   - maximumValueSize: The largest encoded value, in bytes.
    ///   - maximumTimeToLive: The server-side TTL cap.
    ///   - clock: The expiry clock.
    ///   - observer: The event observer.
    public init(
        host: String = "127.0.0.1", port: Int = 6379, username: String? = nil, password: String? = nil,
        namespace: String, masterKeySource: MasterKeySource = .platformDefault,
        maximumValueSize: Int = 1 << 20, maximumTimeToLive: Duration = .seconds(7 * 86_400),
        clock: any CacheClock = SystemClock(), observer: CacheObserver? = nil
    ) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.namespace = namespace
        self.masterKeySource = masterKeySource
        self.connectTimeout = .milliseconds(250)
        self.readTimeout = .milliseconds(50)
        self.writeTimeout = .milliseconds(100)
        self.keepAliveInterval = .milliseconds(500)
        self.maximumValueSize = maximumValueSize
        self.maximumTimeToLive = maximumTimeToLive
        self.epochRefreshInterval = .seconds(1)
        self.clock = clock
        self.observer = observer
    }

    /// The name a generated master key is stored under: `redis.<namespace>`.
    var masterKeyStoreName: String { "redis.\(namespace)" }

    /// Checks every setting a cache depends on.
    ///
    /// - Throws: `CacheError` `.invalidArgument` naming the first bad setting.
    func validate() throws(CacheError) {
        try Self.validateNamespace(namespace)
        guard (1...65_535).contains(port) else {
            throw CacheError(.invalidArgument, "the Redis port must be between 1 and 65535, got \(port)")
        }
        guard !host.isEmpty else { throw CacheError(.invalidArgument, "the Redis host must not be empty") }
        // A C string ends at NUL: the resolver and OpenSSL's name check would see another host than this one.
        guard !([host] + fallbackAddresses.map(\.host)).contains(where: { $0.utf8.contains(0) }) else {
            throw CacheError(.invalidArgument, "a Redis host must not contain a NUL byte")
        }
        guard maximumValueSize > 0, maximumValueSize <= 512 << 20 else {
            throw CacheError(
                .invalidArgument, "maximumValueSize must be 1 byte to 512 MiB, got \(maximumValueSize)")
        }
        // The upper bound keeps every PX argument far inside Int64 milliseconds.
        guard maximumTimeToLive >= .milliseconds(1), maximumTimeToLive <= .seconds(100 * 365 * 86_400) else {
            throw CacheError(.invalidArgument, "maximumTimeToLive must be 1 ms to 100 years")
        }
        for (name, value) in [
            ("connectTimeout", connectTimeout), ("readTimeout", readTimeout), ("writeTimeout", writeTimeout),
            ("keepAliveInterval", keepAliveInterval),
        ] where value <= .zero {
            throw CacheError(.invalidArgument, "\(name) must be positive")
        }
        for address in fallbackAddresses {
            guard !address.host.isEmpty, (1...65_535).contains(address.port) else {
                throw CacheError(
                    .invalidArgument, "a fallback address needs a host and a port between 1 and 65535, got \(address)")
            }
        }
        guard (1...16).contains(connectionCount) else {
            throw CacheError(.invalidArgument, "connectionCount must be 1...16, got \(connectionCount)")
        }
        if let fenceConfirmationTimeout, fenceConfirmationTimeout <= .zero {
            throw CacheError(.invalidArgument, "fenceConfirmationTimeout must be positive or nil")
        }
        if let purgeInterval, purgeInterval <= .zero {
            throw CacheError(.invalidArgument, "purgeInterval must be positive or nil")
        }
        try tls?.validate()
        try loadLease?.validate()
        guard trackedKeyLimit >= 2 else {
            throw CacheError(.invalidArgument, "trackedKeyLimit must be at least 2, got \(trackedKeyLimit)")
        }
    }

    /// Checks that `namespace` is 1 to 64 characters from `A-Z a-z 0-9 . _ -`.
    ///
    /// - Throws: `CacheError` `.invalidArgument` with the rule.
    static func validateNamespace(_ namespace: String) throws(CacheError) {
        let allowed = namespace.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
        guard allowed, (1...maximumNamespaceLength).contains(namespace.utf8.count) else {
            throw CacheError(
                .invalidArgument,
                "the namespace \"\(namespace)\" must be 1 to 64 characters from A-Z a-z 0-9 . _ -")
        }
    }
}

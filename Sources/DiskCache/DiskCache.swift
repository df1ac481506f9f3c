// API SKETCH — to be implemented by the DiskCache work (issue 3). Signatures are the contract the CLI and
// MultiCache code against; bodies are placeholders.
import CacheCore
import Foundation

/// An encrypted-at-rest disk tier: one AES-256-GCM file per entry under the platform caches directory.
public final class DiskCache<Key: DiskCacheKey, Value: Sendable>: Cache, Sendable {
    /// The clock that decides expiry.
    public var clock: any CacheClock { configuration.clock }
    /// The configuration the store was opened with.
    public let configuration: DiskCacheConfiguration
    /// The store's folder.
    public var directory: URL { configuration.resolvedDirectory }
    let codec: DiskValueCodec<Value>

    /// Opens (creating if needed) the store described by `configuration`, with `codec` for values.
    ///
    /// - Throws: `CacheError` `.wrongKey` when the store was created under another master key (nothing is
    ///   deleted), `.invalidKey` for a malformed key file, `.invalidArgument` for a negative limit,
    ///   `.io`/`.permissionDenied` when the folder cannot be created.
    public init(configuration: DiskCacheConfiguration, codec: DiskValueCodec<Value>) throws {
        self.configuration = configuration
        self.codec = codec
    }

    // MARK: Synchronous API (does file I/O on the caller's thread)

    /// Reads the live entry for `key`; a missing, expired or corrupt entry is `nil`.
    public func entry(forKey key: Key) throws -> CacheEntry<Value>? { nil }
    /// Reads the live value for `key`.
    public func value(forKey key: Key) throws -> Value? { try entry(forKey: key)?.value }
    /// Stores `entry` under `key` atomically.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) throws {}
    /// Stores `value` under `key` with `expiry` (the store's default expiry when `nil`).
    public func setValue(_ value: Value, forKey key: Key, expiry: Expiry? = nil) throws {}
    /// Removes the entry for `key`.
    public func removeEntry(forKey key: Key) throws {}
    /// Rotates the key epoch, then deletes every entry file.
    public func removeAll() throws {}
    /// Removes expired entries; returns how many.
    @discardableResult public func removeExpired() throws -> Int { 0 }
    /// Trims least-recently-used entries until the store is at or below its low-water mark.
    @discardableResult public func trim() throws -> Int { 0 }
    /// Trims until the store holds at most `bytes` bytes.
    @discardableResult public func trim(toBytes bytes: Int) throws -> Int { 0 }
    /// Authenticates every entry, removes the ones that fail, and reports them.
    public func verify(progress: ((Int, Int) -> Void)? = nil) throws -> DiskCacheVerifyReport {
        DiskCacheVerifyReport(checked: 0, removed: [])
    }
    /// Lists live entries (key, size on disk, expiry), decrypting each record's header.
    public func listEntries() throws -> [DiskCacheEntryInfo<Key>] { [] }
    /// Counters and totals, persisted with the store.
    public var statistics: DiskCacheStatistics { DiskCacheStatistics() }
    /// Runs `body` while holding an advisory exclusive lock (flock) for `key`, shared by every process.
    public func withLock<R>(forKey key: Key, _ body: () throws -> R) throws -> R { try body() }

    // MARK: Async API (file I/O runs off the cooperative pool)

    /// Reads the live entry for `key` without blocking the cooperative thread pool.
    public func entry(forKey key: Key) async throws -> CacheEntry<Value>? { nil }
    /// Stores `entry` under `key` without blocking the cooperative thread pool.
    public func setEntry(_ entry: CacheEntry<Value>, forKey key: Key) async throws {}
    /// Removes the entry for `key` without blocking the cooperative thread pool.
    public func removeEntry(forKey key: Key) async throws {}
    /// Removes every entry without blocking the cooperative thread pool.
    public func removeAll() async throws {}
}

/// How a DiskCache is opened.
public struct DiskCacheConfiguration: Sendable {
    /// Whether writes are flushed to stable storage before they return.
    public enum Durability: Sendable { case none, fsync }
    /// Where the 256-bit master key comes from.
    public enum KeySource: Sendable {
        /// A key given by the caller (32 bytes).
        case key(Data)
        /// The default key file for `name`, created on first use with 0600 permissions.
        case defaultKeyFile
        /// A key file at this path, created on first use with 0600 permissions.
        case keyFile(URL)
    }
    public var name: String
    public var directory: URL?
    public var maxBytes: Int?
    public var maxEntries: Int?
    public var lowWaterFraction: Double
    public var defaultExpiry: Expiry
    public var durability: Durability
    public var keySource: KeySource
    public var clock: any CacheClock
    public var observer: CacheObserver?

    public init(
        name: String,
        directory: URL? = nil,
        maxBytes: Int? = nil,
        maxEntries: Int? = nil,
        lowWaterFraction: Double = 0.8,
        defaultExpiry: Expiry = .never,
        durability: Durability = .none,
        keySource: KeySource = .defaultKeyFile,
        clock: any CacheClock = SystemClock(),
        observer: CacheObserver? = nil
    ) {
        self.name = name
        self.directory = directory
        self.maxBytes = maxBytes
        self.maxEntries = maxEntries
        self.lowWaterFraction = lowWaterFraction
        self.defaultExpiry = defaultExpiry
        self.durability = durability
        self.keySource = keySource
        self.clock = clock
        self.observer = observer
    }

    /// `directory`, or the platform caches directory / "Strata" / `name`.
    public var resolvedDirectory: URL { directory ?? URL(fileURLWithPath: "/tmp") }
}

/// A key whose canonical bytes are stable across processes and machines (never `hashValue`).
public protocol DiskCacheKey: Hashable, Sendable {
    /// The bytes that name this key on disk: equal keys give equal bytes.
    var canonicalBytes: Data { get }
    /// Rebuilds a key from its canonical bytes, or `nil` when they are not this type's.
    init?(canonicalBytes: Data)
}

/// Turns values into bytes and back.
public struct DiskValueCodec<Value>: Sendable {
    public var encode: @Sendable (Value) throws -> Data
    public var decode: @Sendable (Data) throws -> Value
    public init(encode: @escaping @Sendable (Value) throws -> Data, decode: @escaping @Sendable (Data) throws -> Value)
    {
        self.encode = encode
        self.decode = decode
    }
}

extension DiskValueCodec where Value == Data {
    /// Stores `Data` unchanged.
    public static var data: DiskValueCodec<Data> { DiskValueCodec(encode: { $0 }, decode: { $0 }) }
}

/// One live entry, as listed by `DiskCache.listEntries()`.
public struct DiskCacheEntryInfo<Key: Sendable>: Sendable {
    public var key: Key
    public var size: Int
    public var expiresAt: Date?
    public var lastAccess: Date
}

/// What `verify` found.
public struct DiskCacheVerifyReport: Sendable {
    public var checked: Int
    public var removed: [String]
}

/// DiskCache counters.
public struct DiskCacheStatistics: Sendable {
    public var base = CacheStatistics()
    public var corruptEntriesRemoved = 0
    public var maxBytes: Int? = nil
    public var maxEntries: Int? = nil
}

// SKETCH: canonical key bytes (the DiskCache work refines and documents these).
extension String: DiskCacheKey {
    /// UTF-8 of the Unicode NFC form.
    public var canonicalBytes: Data { Data(precomposedStringWithCanonicalMapping.utf8) }
    /// Decodes UTF-8.
    public init?(canonicalBytes: Data) { self.init(data: canonicalBytes, encoding: .utf8) }
}

extension DiskValueCodec where Value: Codable {
    /// Encodes values as JSON.
    public static func json() -> DiskValueCodec<Value> {
        DiskValueCodec(
            encode: { try JSONEncoder().encode($0) },
            decode: { try JSONDecoder().decode(Value.self, from: $0) }
        )
    }
}

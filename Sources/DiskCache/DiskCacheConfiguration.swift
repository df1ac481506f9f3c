import CacheCore
import CacheCrypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a ``DiskCache`` is opened: where the store lives, its limits, its master key and its clock.
///
/// ```swift
/// let configuration = DiskCacheConfiguration(
///     name: "thumbnails", byteLimit: 200 << 20, defaultExpiry: .seconds(7 * 86_400))
/// let cache = try DiskCache<String, Data>(configuration: configuration)
/// ```
///
/// A plain value; thread-safe to copy and share. Creating one does no I/O and checks nothing: the
/// values are checked when a ``DiskCache`` is opened with it.
public struct DiskCacheConfiguration: Sendable {
    /// Whether writes are flushed to stable storage before they return.
    ///
    /// A plain value; thread-safe.
    public enum Durability: Sendable, Hashable {
        /// Rely on the operating system to write data back in its own time. A crash of the process
        /// loses nothing (the rename is atomic); a power cut may lose recent writes but never leaves a
        /// partial entry that authenticates.
        case none
        /// `fsync(2)` each temporary file before its rename and the entry's folder after it, so a write
        /// that returned survives a power cut. Costs one or two disk flushes per write. On Apple platforms
        /// the flush is `fcntl(F_FULLFSYNC)`, which also empties the drive's cache (plain `fsync` there does
        /// not), falling back to `fsync` on file systems that refuse it.
        case fsync
    }

    /// The store's name: one folder name under the platform caches folder (no `/`, not `.` or `..`),
    /// also used in messages and as the default key file's name.
    public var name: String
    /// The store's folder, or `nil` for the default location (see ``resolvedDirectory``).
    public var directory: URL?
    /// The most bytes the entry files may take on disk (their real sizes); `nil` for no limit, 0 to
    /// keep nothing.
    public var byteLimit: Int?
    /// The most entries the store may hold; `nil` for no limit, 0 to keep nothing.
    public var countLimit: Int?
    /// The fraction of each limit a trim brings the store down to (0 < fraction ≤ 1; a ratio, not a
    /// size), so that trimming happens once every many writes rather than on each one. The mark is the
    /// limit times the fraction, rounded down.
    public var lowWaterFraction: Double
    /// The expiry of values stored with `setValue(_:forKey:expiry:)` when `expiry` is `nil`.
    public var defaultExpiry: Expiry
    /// Whether writes are flushed to stable storage before they return.
    public var durability: Durability
    /// Where the master key comes from.
    public var masterKeySource: MasterKeySource
    /// The Data Protection class of the store's folders and key file (iOS, tvOS, watchOS, visionOS).
    public var fileProtection: FileProtection
    /// The clock that decides expiry and stamps last-access times (wall-clock instants on disk).
    public var clock: any CacheClock
    /// Receives corrupt-entry, read-failure, stale-file and maintenance-failure events; never called
    /// under a lock, called on the thread doing the operation.
    public var observer: CacheObserver?
    /// Which storage engine holds the entries: a new store is created with it, an existing store must
    /// have been created with it (``Engine/automatic`` opens either).
    public var engine: Engine

    /// Creates a configuration. Does no I/O and validates nothing; ``DiskCache`` checks the values when
    /// it opens the store.
    ///
    /// - Parameters:
    ///   - name: The store's folder name under the default location, and the name used for the default
    ///     key file. Must be a single path component.
    ///   - directory: The store's folder; `nil` for `<caches>/Strata/<name>`.
    ///   - byteLimit: Limit on the bytes the entry files take on disk (header, nonce and tag included);
    ///     `nil` for none. A negative value makes the cache's initializer throw
    ///     ``CacheError/Code/invalidArgument``.
    ///   - countLimit: Limit on the number of entries (a count); `nil` for none. Negative values are
    ///     rejected.
    ///   - lowWaterFraction: Fraction of each limit a trim aims for, in (0, 1]; 0.8 by default.
    ///   - defaultExpiry: Expiry used when a write gives none; `.never` by default.
    ///   - durability: `.none` (default) or `.fsync`.
    ///   - masterKeySource: Where the master key comes from; ``MasterKeySource/platformDefault`` by default (the
    ///     Keychain on iOS, tvOS, watchOS and visionOS, the default key file elsewhere).
    ///   - fileProtection: The Data Protection class of the store's files;
    ///     ``FileProtection/completeUntilFirstUserAuthentication`` by default. Ignored on macOS and Linux.
    ///   - clock: The wall clock; the system clock by default.
    ///   - observer: Receives ``CacheEvent``s; `nil` by default.
    ///   - engine: The storage engine; ``Engine/automatic`` by default (an existing store's own engine, the
    ///     SQLite engine for a new one).
    public init(
        name: String,
        directory: URL? = nil,
        byteLimit: Int? = nil,
        countLimit: Int? = nil,
        lowWaterFraction: Double = 0.8,
        defaultExpiry: Expiry = .never,
        durability: Durability = .none,
        masterKeySource: MasterKeySource = .platformDefault,
        fileProtection: FileProtection = .completeUntilFirstUserAuthentication,
        clock: any CacheClock = SystemClock(),
        observer: CacheObserver? = nil,
        engine: Engine = .automatic
    ) {
        self.name = name
        self.directory = directory
        self.byteLimit = byteLimit
        self.countLimit = countLimit
        self.lowWaterFraction = lowWaterFraction
        self.defaultExpiry = defaultExpiry
        self.durability = durability
        self.masterKeySource = masterKeySource
        self.fileProtection = fileProtection
        self.clock = clock
        self.observer = observer
        self.engine = engine
    }

    /// The store's folder: ``directory`` when given, otherwise `<caches>/Strata/<name>`, where `<caches>` is
    /// ``DiskCacheLocation/cachesFolder(environment:)`` (`FileManager`'s caches folder on Apple platforms,
    /// `$XDG_CACHE_HOME` or `$HOME/.cache` elsewhere: the same home as the default key file's).
    ///
    /// - Complexity: O(1); reads the environment or asks `FileManager` for the folder, touches no file.
    public var resolvedDirectory: URL {
        if let directory { return directory.standardizedFileURL }
        return DiskCacheLocation.cachesFolder()
            .appendingPathComponent("Strata", isDirectory: true)
            .appendingPathComponent(name, isDirectory: true)
    }

    /// Checks the values a cache cannot work with.
    ///
    /// - Throws: ``CacheError/Code/invalidArgument`` naming the bad field.
    func validate() throws {
        if let byteLimit, byteLimit < 0 {
            throw CacheError(.invalidArgument, "byteLimit must be nil (unlimited) or at least 0, not \(byteLimit)")
        }
        if let countLimit, countLimit < 0 {
            throw CacheError(.invalidArgument, "countLimit must be nil (unlimited) or at least 0, not \(countLimit)")
        }
        guard lowWaterFraction > 0, lowWaterFraction <= 1 else {
            throw CacheError(.invalidArgument, "lowWaterFraction must be in (0, 1], not \(lowWaterFraction)")
        }
        if directory == nil {
            guard !name.isEmpty, name != ".", name != "..", !name.contains("/"), !name.contains("\0") else {
                // Control characters (a NUL among them) are escaped so the message stays one readable line.
                let shown = name.unicodeScalars.map {
                    $0.properties.generalCategory == .control ? "\\u{\(String($0.value, radix: 16))}" : String($0)
                }.joined()
                throw CacheError(
                    .invalidArgument, "store name '\(shown)' must be one folder name (no '/', not '.' or '..')")
            }
        }
        if case .masterKeyFile(let url) = masterKeySource {
            // A master key beside the ciphertext it seals protects nothing (Docs/Security.md).
            let store = resolvedDirectory.standardizedFileURL.path
            let keyPath = url.standardizedFileURL.path
            if keyPath == store || keyPath.hasPrefix(store.hasSuffix("/") ? store : store + "/") {
                throw CacheError(
                    .invalidArgument,
                    "the master key file must live outside the store's folder, not inside it", path: keyPath)
            }
        }
    }
}

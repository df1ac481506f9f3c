import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport

@testable import DiskCache
@testable import MemoryCache

/// A single `MemoryCache` or `DiskCache` of `String` keys and `Data` values, seen through the operations
/// the single-tier load-once tests need, with its coordinator's events logged.
struct LoadingTier: Sendable {
    enum Kind: String, CaseIterable, Sendable, CustomStringConvertible {
        case memory, disk
        var description: String { rawValue }
    }

    /// The ways a tier's own removals are called; each must fence a load in flight.
    enum Removal: String, Sendable, CustomStringConvertible {
        /// `removeEntry(forKey:)`, synchronous (memory) or synchronous throwing (disk).
        case removeEntry
        /// `removeEntry(forKey:)` through `any Cache` (memory) or the async twin (disk).
        case removeEntryAsync
        /// `removeValue(forKey:)` (memory only).
        case removeValue
        /// `removeAll()`, synchronous.
        case removeAll
        /// `removeAll()` through `any Cache` (memory) or the async twin (disk).
        case removeAllAsync
        var description: String { rawValue }
    }

    /// A tier and one of its removals, a test argument.
    struct RemovalCase: Sendable, CustomStringConvertible {
        let kind: Kind
        let removal: Removal
        var description: String { "\(kind).\(removal)" }

        /// Every removal of every tier.
        static let all: [RemovalCase] =
            [Removal.removeEntry, .removeEntryAsync, .removeValue, .removeAll, .removeAllAsync].map {
                RemovalCase(kind: .memory, removal: $0)
            }
            + [Removal.removeEntry, .removeEntryAsync, .removeAll, .removeAllAsync].map {
                RemovalCase(kind: .disk, removal: $0)
            }
    }

    let kind: Kind
    let events = CoordinatorEventLog()
    /// `value(forKey:orLoad:)` with the tier's default expiry.
    let load: @Sendable (String, @escaping @Sendable () async throws -> Data) async throws -> Data
    let read: @Sendable (String) async throws -> Data?
    let write: @Sendable (Data, String) async throws -> Void
    let remove: @Sendable (Removal, String) async throws -> Void
    let statistics: @Sendable () -> CacheStatistics
    /// Keeps a disk tier's folder until the test ends.
    let folder: TemporaryFolder?

    init(_ kind: Kind) throws {
        self.kind = kind
        switch kind {
        case .memory:
            let cache = try MemoryCache<String, Data>()
            let any: any Cache<String, Data> = cache
            load = { key, loader in try await cache.value(forKey: key, orLoad: loader) }
            read = { key in cache.value(forKey: key) }
            write = { value, key in try cache.setValue(value, forKey: key) }
            remove = { removal, key in
                switch removal {
                case .removeEntry: cache.removeEntry(forKey: key)
                case .removeEntryAsync: try await any.removeEntry(forKey: key)
                case .removeValue: cache.removeValue(forKey: key)
                case .removeAll: cache.removeAll()
                case .removeAllAsync: try await any.removeAll()
                }
            }
            statistics = { cache.statistics }
            folder = nil
            cache.loadOnce.storage.observe(events.observer)
        case .disk:
            let folder = TemporaryFolder(label: "single-tier-load-once")
            let cache = try DiskCache<String, Data>(
                configuration: DiskCacheConfiguration(
                    name: "tests", directory: folder.url.appendingPathComponent("store"),
                    masterKeySource: .masterKey(Data(repeating: 7, count: 32)), clock: ManualClock()),
                codec: .data)
            load = { key, loader in try await cache.value(forKey: key, orLoad: loader) }
            read = { key in try await cache.value(forKey: key) }
            write = { value, key in try await cache.setValue(value, forKey: key) }
            remove = { removal, key in
                switch removal {
                case .removeEntry, .removeValue: try Self.removeSynchronously(key, from: cache)
                case .removeEntryAsync: try await cache.removeEntry(forKey: key)
                case .removeAll: try Self.removeSynchronously(nil, from: cache)
                case .removeAllAsync: try await cache.removeAll()
                }
            }
            statistics = { cache.statistics }
            self.folder = folder
            cache.loadOnce.storage.observe(events.observer)
        }
    }
}

extension LoadingTier {
    /// Calls the disk tier's synchronous removal (in an `async` closure the async twin wins): of `key`, or
    /// of every key when `nil`.
    private static func removeSynchronously(_ key: String?, from cache: DiskCache<String, Data>) throws {
        if let key { try cache.removeEntry(forKey: key) } else { try cache.removeAll() }
    }
}

/// The bytes of `text`.
func bytes(_ text: String) -> Data { Data(text.utf8) }

import CacheCore
import CacheTesting
import DiskCache
import Foundation
import MemoryCache
import StrataTestSupport

@testable import MultiCache

/// A MemoryCache over a DiskCache, each behind a `FaultInjectingCache` so a test can fail or hold any
/// call of either tier, and a MultiCache over them, all on one manual clock.
struct TwoTiers {
    let clock: ManualClock
    let fast: FaultInjectingCache<String, Data>
    let slow: FaultInjectingCache<String, Data>
    let cache: MultiCache<String, Data>
    /// The cache's coordinator events: callers joining a load, removals parking.
    let events = CoordinatorEventLog()

    /// The fast tier named "memory", the slow one "disk".
    init(
        fastMaximumLifetime: Duration? = nil, observer: CacheObserver? = nil,
        authority: MultiCache<String, Data>.Authority? = nil
    ) throws {
        let clock = ManualClock()
        self.clock = clock
        fast = FaultInjectingCache(wrapping: try makeMemoryTier(clock: clock))
        slow = FaultInjectingCache(wrapping: try makeSlowTier(clock: clock))
        cache = try MultiCache(
            tiers: [
                .init(fast, name: "memory", maximumLifetime: fastMaximumLifetime),
                .init(slow, name: "disk"),
            ],
            observer: observer, authority: authority)
        cache.coordinator.observe(events.observer)
    }
}

/// The fast tier of the tests: an unlimited MemoryCache.
func makeMemoryTier(clock: ManualClock) throws -> any Cache<String, Data> {
    try MemoryCache<String, Data>(clock: clock)
}

/// The slow tier of the tests: a DiskCache in a fresh temporary folder, removed when the cache goes away.
///
/// On the file engine: this suite tests MultiCache's composition (the DiskCache suite runs both engines), and
/// its async tests run about a hundred at once. On the SQLite engine each store holds about nine descriptors,
/// which took the test process past the ~1,365 at which `Process.run()` of Swift 6.3.1's Foundation on Linux
/// over-reads `/proc/self/fd` and crashes the process (swift-corelibs-foundation #5472, measured: 1,443).
func makeSlowTier(clock: ManualClock) throws -> any Cache<String, Data> {
    let folder = TemporaryFolder(label: "multicache-tests")
    let disk = try DiskCache<String, Data>(
        configuration: DiskCacheConfiguration(
            name: "multicache-tests", directory: folder.url, masterKeySource: .masterKey(testMasterKey), clock: clock,
            engine: .files))
    return FolderOwningCache(disk, folder: folder)
}

/// A fixed master key, so tests never touch the user's key files.
private let testMasterKey = Data((0..<32).map { UInt8($0) })

/// `text` as UTF-8 bytes.
func bytes(_ text: String) -> Data { Data(text.utf8) }

/// Forwards to a disk tier and keeps its folder, deleted when the last reference goes away, so each test
/// cleans up after itself without teardown code.
private final class FolderOwningCache: TagRemovingCache {
    private let base: DiskCache<String, Data>
    private let folder: TemporaryFolder

    init(_ base: DiskCache<String, Data>, folder: TemporaryFolder) {
        self.base = base
        self.folder = folder
    }

    var clock: any CacheClock { base.clock }

    func entry(forKey key: String) async throws -> CacheEntry<Data>? { try await base.entry(forKey: key) }

    func setEntry(_ entry: CacheEntry<Data>, forKey key: String) async throws {
        try await base.setEntry(entry, forKey: key)
    }

    func value(forKey key: String) async throws -> Data? { try await valueThroughEntry(forKey: key) }

    func setValue(_ value: Data, forKey key: String, expiry: Expiry? = nil) async throws {
        try await setValueThroughEntry(value, forKey: key, expiry: expiry)
    }

    func removeEntry(forKey key: String) async throws { try await base.removeEntry(forKey: key) }

    func removeAll() async throws { try await base.removeAll() }
    func removeAll(taggedWith tag: String) async throws { try await base.removeAll(taggedWith: tag) }
}

import CacheCore
import CacheTesting
import DiskCache
import Foundation
import MemoryCache
import StrataTestSupport
import Testing

/// Issue 27 on one `MemoryCache` or one `DiskCache`: every load call takes an expiry, tags and
/// `LoadOptions`, single and bulk, and they combine — through the one extension every tier shares (the
/// Redis tier runs the same calls in its contract suite). Run under ThreadSanitizer.
@Suite(.timeLimit(.minutes(10)))
struct SingleTierLoadCombinationTests {
    private struct Down: Error {}

    enum Kind: String, CaseIterable, Sendable, CustomStringConvertible {
        case memory, disk
        var description: String { rawValue }
    }

    /// A tier of `kind` on `clock`, its coordinator's events logged; `folder` keeps a disk tier's folder.
    private struct Tier: Sendable {
        let cache: any LoadHostingCache<String, Data>
        let events = CoordinatorEventLog()
        let folder: TemporaryFolder?

        init(_ kind: Kind, clock: ManualClock) throws {
            switch kind {
            case .memory:
                cache = try MemoryCache<String, Data>(clock: clock)
                folder = nil
            case .disk:
                let folder = TemporaryFolder(label: "load-combinations")
                cache = try DiskCache<String, Data>(
                    configuration: DiskCacheConfiguration(
                        name: "tests", directory: folder.url.appendingPathComponent("store"),
                        masterKeySource: .masterKey(Data(repeating: 7, count: 32)), clock: clock),
                    codec: .data)
                self.folder = folder
            }
            cache.loadHost.coordinator.observe(events.observer)
        }
    }

    private static let failSafe = LoadOptions(failSafe: .init(maximumStaleness: .seconds(60), throttle: .seconds(5)))
    private static func bytes(_ text: String) -> Data { Data(text.utf8) }

    @Test(arguments: Kind.allCases)
    func aLoadWithTagsAndFailSafeIsStaleForFailSafeAndGoneForATagRemoval(kind: Kind) async throws {
        // Given two values loaded with a tag and fail-safe, both now expired
        let clock = ManualClock()
        let tier = try Tier(kind, clock: clock)
        for key in ["kept", "removed"] {
            _ = try await tier.cache.value(
                forKey: key, expiry: .seconds(10), tags: [key], options: Self.failSafe
            ) { Self.bytes("v1 \(key)") }
        }
        let entry = try #require(try await tier.cache.entryIncludingStale(forKey: "kept"))
        #expect(entry.tags == ["kept"])
        #expect(entry.staleUntil == entry.expiresAt?.addingTimeInterval(60))
        clock.advance(by: 30)

        // When one tag is removed and both loaders fail
        try await tier.cache.removeAll(taggedWith: "removed")
        let kept = try await tier.cache.value(
            forKey: "kept", expiry: .seconds(10), tags: ["kept"], options: Self.failSafe
        ) { throw Down() }
        await #expect(throws: Down.self) {
            try await tier.cache.value(
                forKey: "removed", expiry: .seconds(10), tags: ["removed"], options: Self.failSafe
            ) { throw Down() }
        }

        // Then fail-safe serves the stale value whose tag stands, and nothing for the one whose tag was removed
        #expect(kept == Self.bytes("v1 kept"))
        #expect(try await tier.cache.entryIncludingStale(forKey: "removed") == nil)
    }

    @Test(arguments: Kind.allCases)
    func aTagRemovedWhileALoadWithTagsRunsLeavesItsValueOut(kind: Kind) async throws {
        // Given a load with a tag, held in its loader
        let tier = try Tier(kind, clock: ManualClock())
        let loader = HeldLoader()
        async let loaded = tier.cache.value(forKey: "k", tags: ["t"], options: Self.failSafe) {
            try await loader.hold()
            return Self.bytes("loaded")
        }
        try await loader.waitUntilHeld()
        // When its tag is removed before the loader returns
        try await tier.cache.removeAll(taggedWith: "t")
        loader.release()
        // Then the caller gets the value, and the tier holds nothing for the key
        #expect(try await loaded == Self.bytes("loaded"))
        #expect(try await tier.cache.entryIncludingStale(forKey: "k") == nil)
    }

    @Test func aTagRemovedByAnotherInstanceWhileABulkLoadRunsLeavesItsEntriesDead() async throws {
        // Given two DiskCache instances on one folder (as two processes would share it), and a bulk load with a
        // tag through the first, held in its loader after the tag's version was read
        let clock = ManualClock()
        let tier = try Tier(.disk, clock: clock)
        let other = try DiskCache<String, Data>(
            configuration: DiskCacheConfiguration(
                name: "tests", directory: try #require(tier.folder).url.appendingPathComponent("store"),
                masterKeySource: .masterKey(Data(repeating: 7, count: 32)), clock: clock),
            codec: .data)
        let loader = HeldLoader()
        async let loaded = tier.cache.values(forKeys: ["a", "b"], tags: ["t"]) { keys in
            try await loader.hold()
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, Self.bytes("loaded")) })
        }
        try await loader.waitUntilHeld()
        // When the other instance, which fences no load of the first, removes the tag
        try await other.removeAll(taggedWith: "t")
        loader.release()
        // Then the caller gets the values, and neither instance reads them: they were stamped with the version
        // read before the loader ran
        #expect(try await loaded == ["a": Self.bytes("loaded"), "b": Self.bytes("loaded")])
        #expect(try await tier.cache.value(forKey: "a") == nil)
        #expect(try await other.value(forKey: "b") == nil)
    }

    @Test(arguments: Kind.allCases)
    func aBulkLoadWithFailSafeServesEveryKeyStaleAndThrottlesTheBatch(kind: Kind) async throws {
        // Given two keys bulk-loaded with fail-safe and tags, now expired
        let clock = ManualClock()
        let tier = try Tier(kind, clock: clock)
        let first = try await tier.cache.values(
            forKeys: ["a", "b"], expiry: .seconds(10), tags: ["t"], options: Self.failSafe
        ) { keys in Dictionary(uniqueKeysWithValues: keys.map { ($0, Self.bytes("v1 \($0)")) }) }
        #expect(first == ["a": Self.bytes("v1 a"), "b": Self.bytes("v1 b")])
        #expect(try await tier.cache.entryIncludingStale(forKey: "a")?.tags == ["t"])
        clock.advance(by: 30)

        // When the batch loader fails, twice within the throttle
        let calls = Locked(0)
        for _ in 0..<2 {
            let values = try await tier.cache.values(
                forKeys: ["a", "b"], expiry: .seconds(10), tags: ["t"], options: Self.failSafe
            ) { _ in
                calls.withLock { $0 += 1 }
                throw Down()
            }
            // Then every key is served stale
            #expect(values == ["a": Self.bytes("v1 a"), "b": Self.bytes("v1 b")])
        }
        // And the failing batch ran once: the second call was throttled
        #expect(calls.value == 1)
        #expect(try await tier.cache.value(forKey: "a") == nil)
    }

    @Test(arguments: Kind.allCases)
    func aBulkLoadFailingForAKeyWithoutAStaleValueThrows(kind: Kind) async throws {
        // Given one key loaded with fail-safe and expired, and one never loaded
        let clock = ManualClock()
        let tier = try Tier(kind, clock: clock)
        _ = try await tier.cache.value(forKey: "a", expiry: .seconds(10), options: Self.failSafe) { Self.bytes("a") }
        clock.advance(by: 30)
        // When a batch of both fails, then the error reaches the caller: "b" has nothing to fall back on
        await #expect(throws: Down.self) {
            try await tier.cache.values(forKeys: ["a", "b"], expiry: .seconds(10), options: Self.failSafe) { _ in
                throw Down()
            }
        }
    }

    @Test(arguments: Kind.allCases)
    func aBulkLoadWithStaleWhileRevalidateServesStaleAndRefreshesInOneBackgroundBatch(kind: Kind) async throws {
        // Given two keys bulk-loaded with stale-while-revalidate, just expired
        let clock = ManualClock()
        let tier = try Tier(kind, clock: clock)
        let options = LoadOptions(staleWhileRevalidate: .seconds(20))
        _ = try await tier.cache.values(forKeys: ["a", "b"], expiry: .seconds(10), options: options) { keys in
            Dictionary(uniqueKeysWithValues: keys.map { ($0, Self.bytes("v1")) })
        }
        clock.advance(by: 12)

        // When they are read in bulk again
        let batches = Locked<[[String]]>([])
        let values = try await tier.cache.values(forKeys: ["a", "b"], expiry: .seconds(10), options: options) { keys in
            batches.withLock { $0.append(keys.sorted()) }
            return Dictionary(uniqueKeysWithValues: keys.map { ($0, Self.bytes("v2")) })
        }

        // Then the stale values come back at once, and one background batch refreshes both
        #expect(values == ["a": Self.bytes("v1"), "b": Self.bytes("v1")])
        try await tier.events.wait(for: .loadFinished, count: 2)
        #expect(batches.value == [["a", "b"]])
        #expect(try await tier.cache.value(forKey: "a") == Self.bytes("v2"))
        #expect(try await tier.cache.value(forKey: "b") == Self.bytes("v2"))
    }

    @Test(arguments: Kind.allCases)
    func aBulkLoadStopsWaitingAtTheHardTimeoutAndTheBatchStillStores(kind: Kind) async throws {
        // Given a bulk load with a hard timeout, its loader held
        let clock = ManualClock()
        let tier = try Tier(kind, clock: clock)
        let loader = HeldLoader()
        let options = LoadOptions(hardTimeout: .seconds(1))
        let call = Task {
            try await tier.cache.values(forKeys: ["a"], expiry: .seconds(100), options: options) { keys in
                try await loader.hold()
                return Dictionary(uniqueKeysWithValues: keys.map { ($0, Self.bytes("late")) })
            }
        }
        try await loader.waitUntilHeld()
        // When the timeout passes
        clock.advance(by: 2)
        // Then the caller gets `.loadTimedOut`
        let error = await #expect(throws: CacheError.self) { try await call.value }
        #expect(error?.code == .loadTimedOut)
        // And the batch, released, still stores its value
        loader.release()
        try await tier.events.wait(for: .loadFinished, count: 1)
        #expect(try await tier.cache.value(forKey: "a") == Self.bytes("late"))
    }

    @Test(arguments: Kind.allCases)
    func optionsOutOfRangeAreRefusedByTheBulkCallToo(kind: Kind) async throws {
        let tier = try Tier(kind, clock: ManualClock())
        let error = await #expect(throws: CacheError.self) {
            try await tier.cache.values(forKeys: ["a"], options: LoadOptions(refreshAhead: 1.5)) { _ in [:] }
        }
        #expect(error?.code == .invalidArgument)
    }
}

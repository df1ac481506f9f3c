import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import MultiCache
import Testing

/// A MultiCache's load calls combine tags, options and bulk (issue 27, part 1): one implementation, so a tag
/// removal reaches what a load with options or a bulk load stored, and fail-safe serves what a tagged load
/// stored until the tag is removed. Time is a ManualClock.
@Suite struct MultiCacheLoadCombinationTests {
    struct Tiers {
        let clock = ManualClock()
        let fast: MemoryCache<String, String>
        let slow: MemoryCache<String, String>
        let cache: MultiCache<String, String>

        init() throws {
            fast = try MemoryCache(clock: clock)
            slow = try MemoryCache(clock: clock)
            cache = try MultiCache(tiers: [.init(fast), .init(slow)], clock: clock)
        }
    }

    struct BackendDown: Error {}

    static let failSafe = LoadOptions(failSafe: .init(maximumStaleness: .seconds(60), throttle: .seconds(5)))

    @Test func aTaggedLoadWithFailSafeServesStaleUntilItsTagIsRemoved() async throws {
        let tiers = try Tiers()
        let loaded = try await tiers.cache.value(forKey: "k", expiry: .seconds(10), tags: ["t"], options: Self.failSafe)
        {
            "v1"
        }
        #expect(loaded == "v1")
        #expect(tiers.fast.entry(forKey: "k")?.tags == ["t"])
        #expect(tiers.slow.entry(forKey: "k")?.tags == ["t"])

        // Expired, the loader failing: fail-safe serves the stale value
        tiers.clock.advance(by: 15)
        let stale = try await tiers.cache.value(forKey: "k", expiry: .seconds(10), tags: ["t"], options: Self.failSafe)
        {
            throw BackendDown()
        }
        #expect(stale == "v1")

        // Once the tag is removed there is nothing stale to serve: the loader's error comes through
        try await tiers.cache.removeAll(taggedWith: "t")
        tiers.clock.advance(by: 6)  // past the fail-safe throttle
        await #expect(throws: BackendDown.self) {
            try await tiers.cache.value(forKey: "k", expiry: .seconds(10), tags: ["t"], options: Self.failSafe) {
                throw BackendDown()
            }
        }
    }

    @Test func aBulkLoadWithTagsAndFailSafeServesStaleThenMissesAfterTheTagRemoval() async throws {
        let tiers = try Tiers()
        let keys = ["a", "b", "c"]
        let first = try await tiers.cache.values(
            forKeys: keys, expiry: .seconds(10), tags: ["batch"], options: Self.failSafe
        ) {
            missing in Dictionary(uniqueKeysWithValues: missing.map { ($0, "v-\($0)") })
        }
        #expect(first == ["a": "v-a", "b": "v-b", "c": "v-c"])
        #expect(tiers.fast.entry(forKey: "b")?.tags == ["batch"])

        // Expired, the batch loader failing: every key is served stale
        tiers.clock.advance(by: 15)
        let stale = try await tiers.cache.values(
            forKeys: keys, expiry: .seconds(10), tags: ["batch"], options: Self.failSafe
        ) {
            _ in throw BackendDown()
        }
        #expect(stale == first)

        // After the tag removal, no tier holds any of them, fresh or stale
        try await tiers.cache.removeAll(taggedWith: "batch")
        for key in keys {
            #expect(tiers.fast.entryIncludingStale(forKey: key) == nil)
            #expect(tiers.slow.entryIncludingStale(forKey: key) == nil)
            #expect(try await tiers.cache.entryIncludingStale(forKey: key) == nil)
        }
    }

    @Test func aBulkLoadWithTagsStoresTaggedEntriesThatATagRemovalMisses() async throws {
        let tiers = try Tiers()
        let loaded = try await tiers.cache.values(forKeys: ["x", "y"], tags: ["t"]) { missing in
            Dictionary(uniqueKeysWithValues: missing.map { ($0, $0.uppercased()) })
        }
        #expect(loaded == ["x": "X", "y": "Y"])
        #expect(tiers.slow.entry(forKey: "x")?.tags == ["t"])
        try await tiers.cache.setValue("untagged", forKey: "z")

        try await tiers.cache.removeAll(taggedWith: "t")

        #expect(try await tiers.cache.values(forKeys: ["x", "y", "z"]) == ["z": "untagged"])
        #expect(tiers.fast.value(forKey: "x") == nil)
        #expect(tiers.slow.value(forKey: "y") == nil)
    }
}

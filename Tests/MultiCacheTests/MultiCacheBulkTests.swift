import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import StrataTestSupport
import Testing

@testable import MultiCache

/// Issue 17's bulk reads and loads on a MultiCache: each tier read once for the keys still missing, one
/// batch loader call with exactly the keys missing everywhere, loads shared with single-key callers both
/// ways, results stored in every tier unless fenced. Run under ThreadSanitizer.
@Suite(.timeLimit(.minutes(10)))
struct MultiCacheBulkTests {
    private static let keys = (0..<50).map { "key-\($0)" }

    /// 20 of the 50 keys cached: 0–9 in both tiers, 10–19 in the slow tier only.
    private func seeded() async throws -> ResilientTiers {
        let tiers = try ResilientTiers()
        for key in Self.keys.prefix(10) { try await tiers.cache.setValue(bytes("cached \(key)"), forKey: key) }
        for key in Self.keys[10..<20] { try await tiers.slow.setValue(bytes("cached \(key)"), forKey: key) }
        return tiers
    }

    @Test func bulkReadAsksEachTierOnceForTheKeysStillMissingAndWritesHitsBack() async throws {
        let tiers = try await seeded()
        let fastReads = tiers.fast.callCount(.entry)
        let slowReads = tiers.slow.callCount(.entry)

        let found = try await tiers.cache.values(forKeys: Self.keys)

        #expect(found.count == 20)
        #expect(found["key-15"] == bytes("cached key-15"))
        // The fake tiers have no bulk read, so the default reads key by key: 50 in the fast tier, then only
        // the 40 it lacked in the slow one
        #expect(tiers.fast.callCount(.entry) - fastReads == 50)
        #expect(tiers.slow.callCount(.entry) - slowReads == 40)
        #expect(try await tiers.fast.value(forKey: "key-15") == bytes("cached key-15"))
        #expect(tiers.cache.statistics.hits == 20)
        #expect(tiers.cache.statistics.misses == 30)
    }

    @Test func fiftyKeysWithTwentyPresentMakeOneBatchCallWithTheThirtyMissing() async throws {
        let tiers = try await seeded()
        let calls = Locked<[[String]]>([])

        let values = try await tiers.cache.values(forKeys: Self.keys + ["key-3", "key-40"], expiry: .seconds(60)) {
            missing in
            calls.withLock { $0.append(missing) }
            return Dictionary(uniqueKeysWithValues: missing.map { ($0, bytes("loaded \($0)")) })
        }

        #expect(calls.value.count == 1)
        #expect(Set(calls.value.first ?? []) == Set(Self.keys[20...]))
        #expect(calls.value.first?.count == 30)
        #expect(values.count == 50)
        #expect(values["key-5"] == bytes("cached key-5"))
        #expect(values["key-30"] == bytes("loaded key-30"))
        #expect(tiers.cache.statistics.loads == 1)
        for key in Self.keys[20...] {
            #expect(try await tiers.plain(key) == (bytes("loaded \(key)"), bytes("loaded \(key)")))
        }
        #expect(try await tiers.slow.entry(forKey: "key-30")?.expiresAt == tiers.clock.now.addingTimeInterval(60))
    }

    @Test func aKeyTheLoaderLeavesOutIsAbsentAndNotStored() async throws {
        let tiers = try ResilientTiers()
        let values = try await tiers.cache.values(forKeys: ["a", "b"]) { _ in ["a": bytes("A")] }
        #expect(values == ["a": bytes("A")])
        #expect(try await tiers.held("b") == (nil, nil))
    }

    @Test func aBatchSharesLoadsWithSingleKeyCallersBothWays() async throws {
        let tiers = try ResilientTiers()
        let cache = tiers.cache
        let single = HeldLoader()
        let batch = HeldLoader()
        let batchCalls = Locked<[[String]]>([])
        let singleRuns = Counter()

        // A single-key load of "a" is in flight
        let loadA = Task {
            try await cache.value(forKey: "a") {
                singleRuns.increment()
                try await single.hold()
                return bytes("single a")
            }
        }
        try await single.waitUntilHeld()

        // A batch of a, b, c loads only b and c, and joins the load of a
        let bulk = Task {
            try await cache.values(forKeys: ["a", "b", "c"]) { missing in
                batchCalls.withLock { $0.append(missing) }
                try await batch.hold()
                return Dictionary(uniqueKeysWithValues: missing.map { ($0, bytes("batch \($0)")) })
            }
        }
        try await batch.waitUntilHeld()
        // A single-key caller of c joins the batch's load instead of running its loader
        let loadC = Task {
            try await cache.value(forKey: "c") {
                singleRuns.increment()
                return bytes("single c")
            }
        }
        try await tiers.events.wait(for: .joinedLoad, count: 2)

        single.release()
        batch.release()
        #expect(try await loadA.value == bytes("single a"))
        #expect(try await loadC.value == bytes("batch c"))
        #expect(try await bulk.value == ["a": bytes("single a"), "b": bytes("batch b"), "c": bytes("batch c")])
        #expect(batchCalls.value.map { $0.sorted() } == [["b", "c"]])
        #expect(singleRuns.value == 1)
        #expect(tiers.cache.statistics.loads == 2)
        #expect(try await tiers.plain("c") == (bytes("batch c"), bytes("batch c")))
    }

    @Test func aRemovalDuringABatchKeepsThatKeyOutOfTheTiers() async throws {
        let tiers = try ResilientTiers()
        let cache = tiers.cache
        let batch = HeldLoader()
        let bulk = Task {
            try await cache.values(forKeys: ["a", "b"]) { missing in
                try await batch.hold()
                return Dictionary(uniqueKeysWithValues: missing.map { ($0, bytes("batch \($0)")) })
            }
        }
        try await batch.waitUntilHeld()
        try await cache.removeEntry(forKey: "b")
        batch.release()

        #expect(try await bulk.value == ["a": bytes("batch a"), "b": bytes("batch b")])
        #expect(try await tiers.plain("a") == (bytes("batch a"), bytes("batch a")))
        #expect(try await tiers.held("b") == (nil, nil))
    }

    @Test func aFailingBatchLoaderReachesTheCallerAndTheJoinedSingleKeyCallers() async throws {
        let tiers = try ResilientTiers()
        let cache = tiers.cache
        let batch = HeldLoader()
        let bulk = Task {
            try await cache.values(forKeys: ["a", "b"]) { _ in
                try await batch.hold()
                throw BackendDown()
            }
        }
        try await batch.waitUntilHeld()
        let loadB = Task { try await cache.value(forKey: "b") { bytes("single b") } }
        try await tiers.events.wait(for: .joinedLoad, count: 1)
        batch.release()

        await #expect(throws: BackendDown.self) { try await bulk.value }
        await #expect(throws: BackendDown.self) { try await loadB.value }
        #expect(try await tiers.held("a") == (nil, nil))
    }

    @Test func aSynchronousFirstTierIsReadAtOnceAndOnlyItsMissesGoFurther() async throws {
        let clock = ManualClock()
        let memory = try MemoryCache<String, Data>(clock: clock)
        let slow = FaultInjectingCache<String, Data>(clock: clock)
        let cache = try MultiCache<String, Data>(tiers: [.init(memory, name: "memory"), .init(slow, name: "fake")])
        try memory.setValue(bytes("m"), forKey: "a")
        try await slow.setValue(bytes("s"), forKey: "b")

        let found = try await cache.values(forKeys: ["a", "b", "c", "a", "c"])

        #expect(found == ["a": bytes("m"), "b": bytes("s")])
        // Only the two keys the memory tier lacked reached the slow tier, once each
        #expect(slow.callCount(.entry) == 2)
        #expect(memory.value(forKey: "b") == bytes("s"))
        #expect(cache.statistics.hits == 2)
        #expect(cache.statistics.misses == 1)
        #expect(cache.tierStatistics[0].hits == 1)
        #expect(cache.tierStatistics[1].hits == 1)
    }
}

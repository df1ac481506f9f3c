import CacheCore
import CacheTesting
import MultiCache
import Testing

/// Deterministic versions of the interleavings the concurrency stress test found: a read (or a load's
/// re-check) that starts while a removal or write is still working through the tiers must not put the old
/// value back once that removal or write has returned.
@Suite struct MultiCacheMutationRaceTests {
    private func makeTiers() throws -> (
        fast: FaultInjectingCache<String, Int>, slow: FaultInjectingCache<String, Int>, cache: MultiCache<String, Int>
    ) {
        let fast = FaultInjectingCache<String, Int>()
        let slow = FaultInjectingCache<String, Int>()
        let cache = try MultiCache<String, Int>(tiers: [.init(fast, name: "fast"), .init(slow, name: "slow")])
        return (fast, slow, cache)
    }

    @Test func readDuringRemovalDoesNotWriteTheRemovedValueBack() async throws {
        // Given: the value only in the slow tier, and a removal parked on the slow tier.
        let (fast, slow, cache) = try makeTiers()
        try await slow.setValue(1, forKey: "k", expiry: .never)
        slow.hold(.removeEntry)
        let removal = Task { try await cache.removeEntry(forKey: "k") }
        await slow.waitUntilHeld(.removeEntry)

        // When: a read runs while the removal is half done, then the removal finishes.
        _ = try await cache.entry(forKey: "k")
        slow.release(.removeEntry)
        try await removal.value

        // Then: no tier holds the removed value.
        #expect(try await fast.entry(forKey: "k") == nil)
        #expect(try await cache.entry(forKey: "k") == nil)
    }

    @Test func readDuringWriteDoesNotWriteTheOldValueOverTheNewOne() async throws {
        // Given: version 1 in the slow tier, and a write of version 2 that reached the fast tier but is
        // parked on the slow one; then the fast tier drops the key, as a size-limited tier may at any time.
        let (fast, slow, cache) = try makeTiers()
        try await slow.setValue(1, forKey: "k", expiry: .never)
        slow.hold(.setEntry)
        let write = Task { try await cache.setValue(2, forKey: "k", expiry: .never) }
        await slow.waitUntilHeld(.setEntry)
        try await fast.removeEntry(forKey: "k")

        // When: a read runs while version 2 is half written, then the write finishes.
        _ = try await cache.entry(forKey: "k")
        slow.release(.setEntry)
        try await write.value

        // Then: every read after the write returned sees version 2, never the older version 1.
        #expect(try await cache.entry(forKey: "k")?.value == 2)
        #expect(try await fast.entry(forKey: "k")?.value != 1)
    }
}

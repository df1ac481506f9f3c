import Testing

@testable import MemoryCache

/// Two defects an adversarial run found in W-TinyLFU (6 December 2026), kept here as known issues until they
/// are fixed: each test states what should hold and fails loudly ("known issue was not recorded") once it does,
/// so the fix must remove the `withKnownIssue` wrapper.
@Suite struct WindowTinyLFUKnownIssueTests {
    @Test func aShardKeepsTheEntryItJustStoredWithACountLimitOnly() throws {
        // Given a two-shard cache of one entry a shard, and the first shard's entry read once (referenced)
        let cache = try MemoryCache<Int, Int>(countLimit: 2, shardCount: 2, policy: .windowTinyLFU)
        let keys = Array((0..<10_000).filter { cache.shardIndex(of: $0) == 0 }.prefix(2))
        try cache.setValue(1, forKey: keys[0])
        #expect(cache[keys[0]] == 1)

        // When another key of the same shard is stored
        try cache.setValue(2, forKey: keys[1])

        // Then it should be held (Docs/MemoryCache.md: with a count limit only, a new entry survives its own
        // insertion); today the window's second chance queues the read entry behind it, and it loses its duel
        withKnownIssue("a shard's second chance makes the new entry the candidate") {
            #expect(cache[keys[1]] == 2)
        }
    }

    @Test func noStaleRecordBecomesCurrentAgainAfterTheTickWraps() throws {
        // Given three entries, key 1 promoted to the protected segment at tick s
        let cache = try MemoryCache<Int, Int>(countLimit: 100, policy: .windowTinyLFU)
        let settle = { _ = cache.removeValue(forKey: -1) }  // applies the buffered hits
        func tick() -> UInt32 { cache.firstShard.withLock { $0.tick } }
        for key in 1...3 { try cache.setValue(0, forKey: key) }
        _ = cache[1]
        settle()
        let promotedAt = tick()

        // When the tick runs through the full compaction and the wrap at 2^29 (set near it instead of 2^29
        // hits) to just before s, and key 1 is then used twice, at s - 1 and at s
        cache.firstShard.withLock { $0.tick = (1 << 29) - 3 }
        for _ in 0..<1_000 where tick() != promotedAt - 2 {
            _ = cache[3]
            settle()
        }
        #expect(tick() == promotedAt - 2)
        for _ in 0..<2 {
            _ = cache[1]
            settle()
        }

        // Then its record from before the wrap should be stale; today it is current again
        withKnownIssue("the compaction at the wrap keeps records whose tick comes round again") {
            #expect(cache.invariantViolation() == nil)
        }
    }
}

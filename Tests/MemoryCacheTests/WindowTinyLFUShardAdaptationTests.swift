import Testing

@testable import MemoryCache

/// How a shard of a sharded cache sizes its window (issue 26, fourth round): its window's ghosts look back
/// twice as far as a one-shard table's, and a ghost hit moves 3 entries instead of 8, a run of hits a whole
/// step more per hit, up to the same 24 entries.
@Suite struct WindowTinyLFUShardAdaptationTests {
    @Test func aShardsWindowGhostsRememberTwoWindowsOfEvictions() throws {
        // Given W-TinyLFU state for a 250-entry shard (a quarter of 1,000), its sketch at full size (256),
        // and a one-shard table of the same size
        var shard = WindowTinyLFU(
            countLimit: 250, costLimit: .max, unlimitedCount: .max, slotCapacity: 8, isShard: true)
        var table = WindowTinyLFU(countLimit: 250, costLimit: .max, unlimitedCount: .max, slotCapacity: 8)
        defer {
            shard.deallocate()
            table.deallocate()
        }
        shard.resize(toCapacity: 250)
        table.resize(toCapacity: 250)
        // Then both windows start at 2 entries; the shard's ghosts remember 4 keys per generation, the
        // table's 2
        #expect(shard.windowCountLimit == 2)
        #expect(shard.windowGhosts.generationSize == 4)
        #expect(table.windowGhosts.generationSize == 2)
        // When both windows grow to a tenth of the entries
        shard.windowShare = 0.1
        shard.resizeRegions()
        table.windowShare = 0.1
        table.resizeRegions()
        // Then the shard's 25-entry window remembers 50 evictions, still within a quarter of its sketch (64)
        #expect(shard.windowCountLimit == 25)
        #expect(shard.windowGhosts.generationSize == 50)
        #expect(table.windowGhosts.generationSize == 25)
        // And the main region's ghosts are the same in both
        #expect(shard.mainGhosts.generationSize == table.mainGhosts.generationSize)
    }

    @Test func aRunOfGhostHitsInAShardStartsAtThreeEntriesAndAddsAWholeStepPerHit() throws {
        // Given W-TinyLFU state for a 250-entry shard whose window holds a tenth of it (so its ghosts
        // remember 50 keys), with ten keys among the window's ghosts and two among the main region's
        var policy = WindowTinyLFU(
            countLimit: 250, costLimit: .max, unlimitedCount: .max, slotCapacity: 8, isShard: true)
        defer { policy.deallocate() }
        policy.windowShare = 0.1
        policy.resizeRegions()
        for hash in UInt32(100)..<110 { policy.windowGhosts.insert(hash) }
        policy.mainGhosts.insert(200)
        policy.mainGhosts.insert(201)
        // When the ten window ghosts are inserted again one after another into the full shard
        var moves: [Double] = []
        for hash in UInt32(100)..<110 {
            let before = policy.windowShare
            let moved = policy.adapt(toInsertionOf: hash, entries: 250)
            #expect(moved)
            moves.append((policy.windowShare - before) * 250)
        }
        // Then the first hit moved the window 3 entries (a one-shard table's 8 would be 3.2% of the shard),
        // each further hit 3 more, up to 24 entries from the eighth on
        let expected: [Double] = [3, 6, 9, 12, 15, 18, 21, 24, 24, 24]
        for (move, want) in zip(moves, expected) { #expect(abs(move - want) < 1e-9, "moves \(moves)") }
        // And a main ghost hit ends the run: it moves the window back by 3 entries, the next by 6
        var before = policy.windowShare
        let shrank = policy.adapt(toInsertionOf: 200, entries: 250)
        #expect(shrank)
        #expect(abs((before - policy.windowShare) * 250 - 3) < 1e-9)
        before = policy.windowShare
        let shrankFurther = policy.adapt(toInsertionOf: 201, entries: 250)
        #expect(shrankFurther)
        #expect(abs((before - policy.windowShare) * 250 - 6) < 1e-9)
    }

    @Test func theShardsOfASharedCacheAdaptByTheShardRule() throws {
        // Given a W-TinyLFU cache of 1,000 entries in four shards, and one in a single shard
        let sharded = try MemoryCache<Int, Int>(countLimit: 1_000, shardCount: 4, policy: .windowTinyLFU)
        let single = try MemoryCache<Int, Int>(countLimit: 1_000, policy: .windowTinyLFU)
        // Then every shard's policy is a shard's, and the single table's is not
        for shard in 0..<sharded.shardCount {
            #expect(sharded.shards[shard].withLock { $0.frequencyPolicy.isShard }, "shard \(shard)")
        }
        #expect(!single.shards[0].withLock { $0.frequencyPolicy.isShard })
        // And a sharded cache emptied by removeAll keeps the shard rule
        sharded.removeAll()
        #expect(sharded.shards[0].withLock { $0.frequencyPolicy.isShard })
    }
}

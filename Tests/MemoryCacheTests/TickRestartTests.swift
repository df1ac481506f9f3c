import CacheCore
import StrataTestSupport
import Testing

@testable import MemoryCache

/// The restart of a table's tick: once the 31 bits of an LRU table's ticks (29 of a W-TinyLFU table's)
/// run out, the current records are numbered again from 1 and the stale ones dropped. A plain wrap to 1
/// let a record that stayed current through it become current again when its tick came round (found by
/// an adversarial run, 6 December 2026). Tests set the tick near the end instead of making 2^31 uses.
@Suite struct TickRestartTests {
    typealias Table = ShardTable<Int, Int>

    // MARK: - LRU

    @Test func approximateTicksRestartBelowTheReferencedBitAndKeepTheOrder() {
        // Given a shard whose tick is about to reach 2^31
        let table = Table(countLimit: 4, costLimit: nil, approximatesRecency: true)
        table.tick = (1 << 31) - 3
        for key in 0..<4 { store(key, in: table) }
        // (the two entries stored before the restart numbered 1 and 2, the next two 3 and 4)
        #expect(table.tick == 4)

        // When entries are read and new ones inserted across the wrap
        #expect(read(0, in: table) == 0)
        store(10, in: table)
        store(11, in: table)

        // Then no stamp or tick uses the referenced bit as part of a tick, the unread entries went first,
        // and the read entry got its second chance
        #expect(table.tick & (1 << 31) == 0)
        #expect(holds(0, in: table) && holds(10, in: table) && holds(11, in: table))
        #expect(!holds(1, in: table) && !holds(2, in: table))
        #expect(table.invariantViolation() == nil)
        for slot in 0..<table.used where table.stamps[slot] != 0 {
            #expect(table.stamps[slot] & ~(1 << 31) != 0, "slot \(slot) stamped with tick 0")
        }
    }

    @Test func approximateTableStaysConsistentAcrossARestart() {
        // Given a shard whose tick restarts a few thousand uses in
        let table = Table(countLimit: 16, costLimit: 40, approximatesRecency: true)
        var random = SplitMix64(seed: 3)
        var latest: [Int: Int] = [:]
        // (Set once: moving the tick back by hand would make stale records current, which no real run of
        // 2^31 uses can do before compaction drops them.)
        table.tick = (1 << 31) - 5_000
        for step in 0..<20_000 {
            let key = Int(random.next(upperBound: 40 as UInt64))
            switch random.next(upperBound: 10 as UInt64) {
            case 0...3:
                let cost = Int(random.next(upperBound: 6 as UInt64))
                _ = table.store(step, forKey: key, cost: cost, expiresAt: .infinity, now: 0)
                latest[key] = step
                #expect(holds(key, in: table), "entry \(key) evicted by its own insertion at step \(step)")
            case 4:
                _ = table.remove(key)
                latest[key] = nil
            case 5:
                var released = Table.Released()
                table.trim(toCount: Int(random.next(upperBound: 16 as UInt64)), into: &released)
            default:
                // Then a read never returns a value other than the latest stored for its key
                if let value = read(key, in: table) { #expect(value == latest[key]) }
            }
            if let problem = table.invariantViolation() {
                Issue.record("step \(step): \(problem)")
                return
            }
        }
    }

    @Test func exactTicksRestartAndKeepTheExactOrder() {
        // Given a one-shard table (exact LRU) whose tick restarts at its third use
        let table = Table(countLimit: 3, costLimit: nil)
        table.tick = (1 << 31) - 3
        for key in 0..<3 { store(key, in: table) }
        #expect(table.tick == 3)
        // When 0 is read after the restart and 3 inserted
        #expect(read(0, in: table) == 0)
        store(3, in: table)
        // Then 1, the least recently used, is evicted, as exact LRU requires
        #expect(!holds(1, in: table) && holds(0, in: table) && holds(2, in: table) && holds(3, in: table))
        #expect(table.invariantViolation() == nil)
    }

    @Test func anExactRecordCurrentThroughTheRestartNeverBecomesCurrentAgain() {
        // Given entry 1 used at tick s, after 30 uses of entry 3
        let table = Table(countLimit: 100, costLimit: nil)
        store(3, in: table)
        for _ in 0..<30 { _ = read(3, in: table) }
        store(1, in: table)
        let usedAt = table.tick

        // When the tick runs through the restart (set near it instead of 2^31 uses) to just before s, and
        // entry 1 is then used twice, at s - 1 and at s
        table.tick = (1 << 31) - 2
        for _ in 0..<1_000 where table.tick != usedAt - 2 { _ = read(3, in: table) }
        #expect(table.tick == usedAt - 2)
        #expect(read(1, in: table) == 1 && read(1, in: table) == 1)

        // Then its record from before the restart is stale: one current record per entry
        #expect(table.invariantViolation() == nil)
    }

    @Test func aReferencedBitSurvivesTheRestart() {
        // Given a shard holding 1, 2 and 3 at its count limit, 1 read since it was queued
        let table = Table(countLimit: 3, costLimit: nil, approximatesRecency: true)
        for key in 1...3 { store(key, in: table) }
        #expect(read(1, in: table) == 1)

        // When 4 is inserted, its use restarting the tick
        table.tick = (1 << 31) - 1
        store(4, in: table)

        // Then 1 kept its second chance through the restart, and 2 went in its place
        #expect(table.tick < 8)
        #expect(holds(1, in: table) && !holds(2, in: table) && holds(3, in: table) && holds(4, in: table))
        #expect(table.invariantViolation() == nil)
    }

    // MARK: - W-TinyLFU

    @Test func aRegionRecordCurrentThroughTheRestartNeverBecomesCurrentAgain() throws {
        // Given three entries, key 1 promoted to the protected segment at tick s
        let cache = try MemoryCache<Int, Int>(countLimit: 100, policy: .windowTinyLFU)
        let settle = { _ = cache.removeValue(forKey: -1) }  // applies the buffered hits
        func tick() -> UInt32 { cache.firstShard.withLock { $0.tick } }
        for key in 1...3 { try cache.setValue(0, forKey: key) }
        for _ in 0..<30 { _ = cache[3] }
        settle()
        _ = cache[1]
        settle()
        let promotedAt = tick()

        // When the tick runs through the restart at 2^29 (set near it instead of 2^29 uses) to just before
        // s, and key 1 is then used twice, at s - 1 and at s
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

        // Then its record from before the restart is stale
        #expect(cache.invariantViolation() == nil)
    }

    @Test func theRestartKeepsEachRegionsOrderAndReferencedBits() {
        // Given a shard's W-TinyLFU table with entries in all three regions, some protected ones read
        // since they were queued (referenced)
        let table = Table(countLimit: 20, costLimit: nil, approximatesRecency: true, policy: .windowTinyLFU)
        for key in 0..<20 { store(key, in: table) }
        for key in 0..<10 { _ = read(key, in: table) }  // promoted
        table.settleBufferedHits()
        for key in [2, 5, 7] { _ = read(key, in: table) }  // referenced
        table.settleBufferedHits()
        func order() -> [[Int]] {
            let policy = table.frequencyPolicy
            return [policy.window, policy.probation, policy.protected].map { queue in
                queue.records[queue.start...].filter {
                    table.stamps[Int($0.slot)] & ~PolicyRegion.referencedBit == $0.stamp
                }
                .map { table.keys[Int($0.slot)] }
            }
        }
        func referenced() -> Set<Int> {
            Set(table.index.filter { table.stamps[Int($0.value.slot)] & PolicyRegion.referencedBit != 0 }.keys)
        }
        let orderBefore = order()
        #expect(referenced() == [2, 5, 7])
        #expect(orderBefore.allSatisfy { !$0.isEmpty })

        // When the tick restarts
        table.tick = (1 << 29) - 1
        table.renumberRegionQueues()

        // Then each region holds the same entries in the same order, numbered 1, 2, … across the queues,
        // and the same entries are referenced
        #expect(order() == orderBefore)
        #expect(referenced() == [2, 5, 7])
        #expect(table.tick == UInt32(table.count + 1))
        #expect(table.invariantViolation() == nil)
    }

    @Test func aWindowTinyLFUShardHoldsFewerThan2To28Entries() {
        // A restart numbers one tick per entry, and must leave room for 2^28 uses before the next
        let table = Table(countLimit: nil, costLimit: nil, policy: .windowTinyLFU)
        #expect(table.countLimit == (1 << 28) - 1)
        #expect(Table(countLimit: nil, costLimit: nil).countLimit == (1 << 30) - 2)
    }
}

import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import MemoryCache

/// A sharded cache (second chance in each shard) under several tasks at once: run under
/// `--sanitize=thread` for races; the assertions check values, expiry, limits and exact counters.
@Suite struct ShardedConcurrencyProbeTests {
    struct Tally: Sendable {
        var reads = 0
        var hits = 0
        var problems: [String] = []
    }

    @Test func tasksThatOwnTheirKeysReadTheirOwnWritesAndNothingExpiredWhileOthersTrimAndPurge() async throws {
        // Given a sharded cache with both limits on a manual clock, small enough that most writes evict
        let clock = ManualClock()
        let cache = try MemoryCache<Int, Int>(
            countLimit: 64, costLimit: 256, shardCount: 16, clock: clock, cost: { $0 & 7 })
        let writers = 4
        let steps = 4_000

        // When each writer reads and writes only its own keys (key % writers == writer), storing an
        // increasing value, while another task moves the clock, trims and purges expired entries
        let tallies = await withTaskGroup(of: Tally.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var tally = Tally()
                    var random = SplitMix64(seed: UInt64(writer + 1))
                    var latest: [Int: Int] = [:]
                    for step in 0..<steps {
                        let key = Int(random.next(upperBound: 100 as UInt64)) * writers + writer
                        let value = step * writers + writer
                        switch random.next(upperBound: 10 as UInt64) {
                        case 0...3:
                            let expiry: Expiry = step % 2 == 0 ? .never : .after(.seconds(2))
                            cache.setValue(value, forKey: key, expiry: expiry)
                            latest[key] = value
                            // Only trims and purges of the other task can take it away at once
                            tally.reads += 1
                            if let found = cache.value(forKey: key) {
                                tally.hits += 1
                                if found != value { tally.problems.append("read \(found) right after \(value)") }
                            }
                        case 4:
                            _ = cache.removeValue(forKey: key)
                            latest[key] = nil
                        default:
                            let before = clock.now
                            tally.reads += 1
                            if let found = cache.entry(forKey: key) {
                                tally.hits += 1
                                if found.value != latest[key] {
                                    tally.problems.append(
                                        "key \(key): \(found.value), last wrote \(String(describing: latest[key]))")
                                }
                                if let expiresAt = found.expiresAt, expiresAt <= before {
                                    tally.problems.append("key \(key) returned after its expiry")
                                }
                            }
                        }
                    }
                    return tally
                }
            }
            group.addTask {
                for round in 0..<400 {
                    clock.advance(by: .milliseconds(250))
                    switch round % 4 {
                    case 0: cache.trim(toCount: 32)
                    case 1: cache.trim(toCost: 100)
                    case 2: cache.removeExpired()
                    default: _ = cache.statistics
                    }
                }
                return Tally()
            }
            return await group.reduce(into: [Tally]()) { $0.append($1) }
        }

        // Then no task saw another value than its own latest, nor an expired one
        #expect(tallies.flatMap(\.problems).prefix(5) == [])
        // And every read was counted exactly once, as the hit or miss it was
        let statistics = cache.statistics
        let reads = tallies.reduce(0) { $0 + $1.reads }
        let hits = tallies.reduce(0) { $0 + $1.hits }
        #expect(statistics.hits == hits)
        #expect(statistics.hits + statistics.misses == reads)
        // And the cache ends within its limits and consistent
        #expect(statistics.count <= 64 && statistics.totalCost <= 256)
        #expect(cache.checkInvariants())
    }
}

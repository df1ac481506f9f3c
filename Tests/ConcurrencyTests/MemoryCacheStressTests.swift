import CacheCore
import MemoryCache
import StrataTestSupport
import Testing

/// MemoryCache under 8 concurrent tasks: no data race (run under `--sanitize=thread`), no limit ever
/// exceeded, no value returned for another key.
@Suite struct MemoryCacheStressTests {
    private static let countLimit = 200
    private static let costLimit = 20_000

    @Test(arguments: [1, 4])
    func mixedOperationsNeverExceedLimitsOrReturnAnotherKeysValue(shardCount: Int) async throws {
        // Given: a cache small enough that most writes evict, with one LRU table or several shards.
        let cache = try MemoryCache<Int, Tagged>(
            countLimit: Self.countLimit, costLimit: Self.costLimit, shardCount: shardCount, cost: { $0.bytes })
        let operations = StressScale.scaled(4_000)

        // When: 8 tasks mix reads, writes, removals, trims and wipes.
        let tallies = try await withThrowingTaskGroup(of: Tally.self) { group in
            for task in 0..<concurrentTasks {
                group.addTask {
                    var generator = SystemRandomNumberGenerator()
                    var tally = Tally()
                    for step in 0..<operations {
                        let key = Int.random(in: 0..<1_000, using: &generator)
                        switch Int.random(in: 0..<1_000, using: &generator) {
                        case 0..<450:
                            if let value = cache.value(forKey: key) {
                                tally.hits += 1
                                if value.key != key { tally.wrongValues += 1 }
                            }
                        case 450..<900:
                            let value = Tagged(key: key, id: task * operations + step, bytes: Int.random(in: 1...400))
                            cache.setValue(value, forKey: key, expiry: .never)
                        case 900..<995:
                            _ = cache.removeValue(forKey: key)
                        case 995..<998:
                            cache.trim(toCount: Self.countLimit / 2)
                        default:
                            cache.removeAll()
                        }
                        let statistics = cache.statistics
                        if statistics.count > Self.countLimit || statistics.totalCost > Self.costLimit {
                            tally.limitBreaches += 1
                        }
                        tally.operations += 1
                    }
                    return tally
                }
            }
            return try await group.reduce(into: Tally()) { $0.add($1) }
        }

        // Then: every operation ran, nothing wrong came back, and no snapshot was over a limit.
        #expect(tallies.operations == concurrentTasks * operations)
        #expect(tallies.wrongValues == 0)
        #expect(tallies.limitBreaches == 0)
        #expect(tallies.hits > 0)
        let final = cache.statistics
        #expect(final.count <= Self.countLimit)
        #expect(final.totalCost <= Self.costLimit)
    }

    private struct Tally: Sendable {
        var operations = 0
        var hits = 0
        var wrongValues = 0
        var limitBreaches = 0

        mutating func add(_ other: Tally) {
            operations += other.operations
            hits += other.hits
            wrongValues += other.wrongValues
            limitBreaches += other.limitBreaches
        }
    }
}

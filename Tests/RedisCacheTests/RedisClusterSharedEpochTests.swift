import CacheCore
import Foundation
import Testing

@testable import RedisCache
@testable import RedisConnection

/// Reads on a cluster share the namespace's epoch `GET` (``RedisConnection/TogetherRequest/isShared``): concurrent reads through one tier
/// send fewer epoch reads than reads, get the right values, and a read that begins after another instance's
/// `removeAll()` returned never serves an entry from before it.
@Suite(.enabled(if: RedisCluster.suitesRun, RedisServer.skipNote))
struct RedisClusterSharedEpochTests {
    @Test func concurrentReadsShareTheEpochReadAndGetTheirOwnValues() async throws {
        // Given 64 keys spread over every primary
        let cluster = try await RedisCluster.shared()
        let cache = try RedisClusterTierTests.tier(cluster)
        let keys = (0..<64).map { "key-\($0)" }
        for key in keys { try await cache.setValue(Data("value of \(key)".utf8), forKey: key, expiry: .hours(1)) }
        // When 64 tasks read them 50 times each
        let wrong = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<64 {
                group.addTask {
                    var wrong = 0
                    for round in 0..<50 {
                        let key = keys[(task + round) % keys.count]
                        if try await cache.value(forKey: key) != Data("value of \(key)".utf8) { wrong += 1 }
                    }
                    return wrong
                }
            }
            return try await group.reduce(0, +)
        }
        // Then every read got its own key's value, and some were answered by an epoch read queued for another
        // (64 tasks keep the counters' connection busy, so reads queue behind its writes)
        #expect(wrong == 0)
        let shared = try #require(cache.route.cluster).statistics.sharedReplies
        print("RedisClusterSharedEpochTests: 3200 reads by 64 tasks, \(shared) answered by a shared epoch read")
        #expect(shared > 0)
        await cache.close()
    }

    @Test func aReadBegunAfterAnotherInstancesClearReturnedNeverServesAnEntryFromBeforeIt() async throws {
        // Given a writer and a reader instance of one namespace
        let (writer, reader) = try await RedisClusterTierTests.instances(seeds: 0, 4)
        let cleared = Locked(-1)
        let done = Locked(false)
        let rounds = 200
        // When the writer stores round r's value and clears, round after round, while 16 tasks read
        let stale = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    var stale = 0
                    while !done.value {
                        let clearedBefore = cleared.value
                        guard let value = try await reader.value(forKey: "k") else { continue }
                        let round = Int(String(decoding: value, as: UTF8.self)) ?? .max
                        // A value of a round whose clear had returned when this read began: served past its clear
                        if round <= clearedBefore { stale += 1 }
                    }
                    return stale
                }
            }
            group.addTask {
                defer { done.withLock { $0 = true } }
                for round in 0..<rounds {
                    try await writer.setValue(Data(String(round).utf8), forKey: "k", expiry: .hours(1))
                    try await writer.removeAll()
                    cleared.withLock { $0 = round }
                }
                return 0
            }
            return try await group.reduce(0, +)
        }
        // Then no read served a value its start had seen cleared
        #expect(stale == 0)
        print(
            "RedisClusterSharedEpochTests: \(rounds) clears under 16 readers, stale 0 expected, got \(stale); "
                + "\(try #require(reader.route.cluster).statistics.sharedReplies) shared epoch replies")
        await writer.close()
        await reader.close()
    }
}

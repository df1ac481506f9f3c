import Foundation
import Testing

/// The fault suite's excuse for a wrong value (`RedisClusterFaultTests.split`) excuses only a loss inside
/// Redis: an older value of the read key's own whose every later acknowledged write overlaps a failover that
/// outlasted the cluster's limit on that key's shard. Everything a tier defect would return stays a failure.
/// No server needed: the wrong values are made by hand.
@Suite struct FaultExcuseTests {
    let start = ContinuousClock.now

    func at(_ seconds: Int) -> ContinuousClock.Instant { start + .seconds(seconds) }

    func wrong(lost: [ClosedRange<ContinuousClock.Instant>]?, port: Int = 7001) -> TierLoad.WrongValue {
        TierLoad.WrongValue(key: "k", port: port, read: "k#1", allowed: ["k#3"], lostWrites: lost)
    }

    /// A failover of shard 0 that took two requests, from second 10 to 20.
    var round: RedisClusterFaultTests.FailoverRound {
        .init(shard: 0, window: at(10)...at(20), settled: at(21), requests: 2)
    }

    func excuse(_ wrong: TierLoad.WrongValue, rounds: [RedisClusterFaultTests.FailoverRound]) -> Bool {
        let shards = [7001: 0, 7002: 1]
        let outlasting = rounds.filter(\.outlastedTheLimit)
        return RedisClusterFaultTests.split([wrong]) { wrong in
            outlasting.contains { $0.shard == shards[wrong.port] && $0.window.overlaps(wrong) }
        }.explained.count == 1
    }

    @Test func anOlderValueWhoseLaterWritesAllOverlapAnOutlastingFailoverOfItsShardIsExcused() {
        #expect(excuse(wrong(lost: [at(12)...at(13), at(19)...at(22)]), rounds: [round]))
    }

    @Test func whatATierDefectWouldReturnIsNeverExcused() {
        // Another key's value or one never written
        #expect(!excuse(wrong(lost: nil), rounds: [round]))
        // An older value with no later acknowledged write
        #expect(!excuse(wrong(lost: []), rounds: [round]))
        // A later write acknowledged before the failover began, or after it ended
        #expect(!excuse(wrong(lost: [at(12)...at(13), at(5)...at(6)]), rounds: [round]))
        #expect(!excuse(wrong(lost: [at(25)...at(26)]), rounds: [round]))
        // A key of another shard
        #expect(!excuse(wrong(lost: [at(12)...at(13)], port: 7002), rounds: [round]))
        // A failover that completed at the first request, within the limit
        var quick = round
        quick.requests = 1
        quick.window = at(10)...at(11)
        #expect(!excuse(wrong(lost: [at(10)...at(11)]), rounds: [quick]))
    }
}

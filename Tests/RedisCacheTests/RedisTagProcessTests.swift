import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import MultiCache
import StrataTestSupport
import Testing

@testable import RedisCache

/// Issue 16's tag fencing and issue 27's load fence with a true second process: a `strata-invalidation-peer`
/// child removes the key (`rm`), everything (`clear`) or the load's tag (`untag`) while this process's tagged
/// load is in flight; this process's clock is 10 s ahead of or behind the child's system clock. 2,000
/// randomised runs (the removal kind, and before, during or after the load); `STRATA_RACE_RUNS` sets another
/// count (10,000 for the figure in Docs/Loading.md).
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote), .serialized, .timeLimit(.minutes(10)))
struct RedisTagProcessTests {
    static var runs: Int { ProcessInfo.processInfo.environment["STRATA_RACE_RUNS"].flatMap { Int($0) } ?? 2_000 }

    @Test func aValueRemovedByAnotherProcessDuringALoadIsNeverStoredNorServedAfterTheRemovalReturns() async throws {
        let server = try RedisServer()
        let namespace = RedisTier.namespace()
        let masterKey = RedisTier.randomMasterKey()
        let peer = try Peer(port: server.port, namespace: namespace, masterKey: masterKey)
        #expect(try await peer.line() == "ready")
        var generator = SystemRandomNumberGenerator()
        let clock = ManualClock(start: Date().addingTimeInterval(Bool.random(using: &generator) ? 10 : -10))
        let redis = try RedisCache<String, String>(
            configuration: RedisTier.configuration(
                port: server.port, namespace: namespace, masterKey: masterKey, clock: clock))
        let loader = try MultiCache<String, String>([MemoryCache(clock: clock), redis])
        var removedMidLoad = 0
        let removals = ["rm", "clear", "untag"]
        var stale = 0
        for run in 0..<Self.runs {
            let key = "k\(run)"
            let tag = "tag-\(run % 5)"
            let started = Gate()
            let release = Gate()
            let load = Task {
                try await loader.value(forKey: key, expiry: .hours(1), tags: [tag]) {
                    started.open()
                    try await release.wait()
                    return "loaded-\(run)"
                }
            }
            let moment = Int.random(in: 0..<3, using: &generator)
            let removal =
                switch removals[run % removals.count] {
                case "rm": "rm \(key)"
                case "clear": "clear"
                default: "untag \(tag)"
                }
            if moment == 0 { #expect(try await peer.ask(removal) == "ok") }
            try await started.wait()
            if moment == 1 {
                #expect(try await peer.ask(removal) == "ok")
                removedMidLoad += 1
            }
            release.open()
            #expect(try await load.value == "loaded-\(run)")
            if moment == 2 { #expect(try await peer.ask(removal) == "ok") }
            if moment >= 1 {
                // Neither written to Redis (the other process reads it there) nor served here afterwards
                let there = try await peer.ask("get \(key)")
                let here = try await redis.value(forKey: key)
                #expect(there == "nil", "run \(run), \(removal) at moment \(moment)")
                #expect(here == nil, "run \(run), \(removal) at moment \(moment)")
                if there != "nil" || here != nil { stale += 1 }
            }
        }
        print("RedisTagProcessTests: \(Self.runs) runs, \(removedMidLoad) removals mid-load, \(stale) stale")
        #expect(removedMidLoad > Self.runs / 5)
        await peer.quit()
    }
}

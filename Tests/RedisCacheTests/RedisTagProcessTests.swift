import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import MultiCache
import StrataTestSupport
import Testing

@testable import RedisCache

/// Issue 16's tag fencing with a true second process: a `strata-invalidation-peer` child removes a tag
/// (`untag`) while this process's tagged load is in flight; this process's clock is 10 s ahead of or
/// behind the child's system clock. 1,000 randomised runs (the removal before, during or after the load).
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote), .serialized, .timeLimit(.minutes(10)))
struct RedisTagProcessTests {
    @Test func aTagRemovedByAnotherProcessDuringALoadIsNeverServedAfterTheRemovalReturns() async throws {
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
        for run in 0..<1_000 {
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
            if moment == 0 { #expect(try await peer.ask("untag \(tag)") == "ok") }
            try await started.wait()
            if moment == 1 {
                #expect(try await peer.ask("untag \(tag)") == "ok")
                removedMidLoad += 1
            }
            release.open()
            #expect(try await load.value == "loaded-\(run)")
            if moment == 2 { #expect(try await peer.ask("untag \(tag)") == "ok") }
            if moment >= 1 {
                #expect(try await peer.ask("get \(key)") == "nil", "run \(run), removal at moment \(moment)")
                #expect(try await redis.value(forKey: key) == nil, "run \(run), removal at moment \(moment)")
            }
        }
        #expect(removedMidLoad > 200)
        await peer.quit()
    }
}

import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import MultiCache
import StrataTestSupport
import Testing

@testable import RedisCache

/// Tags in the Redis tier against a real server: version keys advanced with `INCR`, stamps inside the
/// sealed envelope, removals seen by every client of the namespace whatever its clock, and tracking that
/// carries a tag removal to another client's memory tier.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote), .serialized, .timeLimit(.minutes(10)))
struct RedisTagTests {
    @Test(arguments: RedisEndpoint.Kind.allCases)
    func aTagRemovalByOneClientMissesTheTaggedEntriesForAnotherWithAClock10sAhead(
        over kind: RedisEndpoint.Kind
    ) async throws {
        let endpoint = try RedisEndpoint(kind)
        let namespace = RedisTier.namespace()
        let masterKey = RedisTier.randomMasterKey()
        let writerClock = ManualClock()
        let removerClock = ManualClock()
        removerClock.advance(by: .seconds(10))
        let writer = try RedisCache<String, String>(
            configuration: RedisTier.configuration(
                endpoint: endpoint, namespace: namespace, masterKey: masterKey, clock: writerClock))
        let remover = try RedisCache<String, String>(
            configuration: RedisTier.configuration(
                endpoint: endpoint, namespace: namespace, masterKey: masterKey, clock: removerClock))
        try await writer.setEntry(CacheEntry(value: "balance", tags: ["account:7"]), forKey: "balance")
        try await writer.setEntry(CacheEntry(value: "summary", tags: ["account:7", "summaries"]), forKey: "summary")
        try await writer.setEntry(CacheEntry(value: "other", tags: ["account:8"]), forKey: "other")
        try await writer.setValue("rates", forKey: "rates")
        #expect(try await remover.entry(forKey: "summary")?.tags == ["account:7", "summaries"])
        let stamped = try await writer.tagVersions(for: ["account:7", "account:8"]).versions

        try await remover.removeAll(taggedWith: "account:7")

        #expect(try await writer.value(forKey: "balance") == nil)
        #expect(try await writer.value(forKey: "summary") == nil)
        #expect(try await remover.value(forKey: "summary") == nil)
        #expect(try await writer.value(forKey: "other") == "other")
        #expect(try await writer.value(forKey: "rates") == "rates")
        let after = try await writer.tagVersions(for: ["account:7", "account:8"]).versions
        #expect(after["account:7"] == stamped["account:7"].map { $0 + 1 })
        #expect(after["account:8"] == stamped["account:8"])
    }

    @Test(arguments: RedisEndpoint.Kind.allCases)
    func anEntryStampedBeforeARemovalIsStaleOnArrival(over kind: RedisEndpoint.Kind) async throws {
        let endpoint = try RedisEndpoint(kind)
        let redis = try RedisCache<String, String>(configuration: RedisTier.configuration(endpoint: endpoint))
        let snapshot = try await redis.tagVersions(for: ["t"])
        try await redis.removeAll(taggedWith: "t")
        try await redis.setEntry(CacheEntry(value: "loaded", tags: ["t"]), forKey: "k", taggedAt: snapshot)
        #expect(try await redis.value(forKey: "k") == nil)
        // Stamped now, the same entry lives
        try await redis.setEntry(CacheEntry(value: "written", tags: ["t"]), forKey: "k")
        #expect(try await redis.value(forKey: "k") == "written")
    }

    @Test(arguments: RedisEndpoint.Kind.allCases)
    func aTagRemovalInAnotherClientReachesThisClientsMemoryTierThroughTracking(
        over kind: RedisEndpoint.Kind
    ) async throws {
        let endpoint = try RedisEndpoint(kind)
        let (remover, reader) = try await RedisInvalidationTests.pair(endpoint)
        try await reader.multi.setValue("balance", forKey: "balance", tags: ["account:7"])
        try await reader.multi.setValue("rates", forKey: "rates")
        // Its own writes come back through tracking and drop the copies above; read them up again
        #expect(await reader.log.waitForKey("rates"))
        #expect(try await reader.multi.value(forKey: "balance") == "balance")
        #expect(try await reader.multi.value(forKey: "rates") == "rates")
        #expect(reader.memory.entry(forKey: "balance")?.tags == ["account:7"])

        try await remover.redis.removeAll(taggedWith: "account:7")

        #expect(
            await reader.log.wait {
                if case .tags(let tags) = $0 { return tags == ["account:7"] } else { return false }
            })
        #expect(reader.memory.value(forKey: "balance") == nil)
        #expect(reader.memory.value(forKey: "rates") == "rates")
        #expect(try await reader.multi.value(forKey: "balance") == nil)
    }

    /// Issue 16's fencing test over a real server: two `MultiCache([memory, redis])` clients of one
    /// namespace (each its own connections, memory tier and `ManualClock`, the remover's 10 s ahead or
    /// behind), one loading a tagged value while the other removes the tag at a random moment. After the
    /// removal returns, neither the remover nor a fresh read of Redis ever returns the loaded value.
    @Test(arguments: RedisEndpoint.Kind.allCases)
    func aRemovalWhileATaggedLoadRunsInAnotherClientIsNeverUndoneBySkewedClocks(
        over kind: RedisEndpoint.Kind
    ) async throws {
        let endpoint = try RedisEndpoint(kind)
        let namespace = RedisTier.namespace()
        let masterKey = RedisTier.randomMasterKey()
        func client(skew: Duration) throws -> (MultiCache<String, Int>, RedisCache<String, Int>) {
            let clock = ManualClock()
            clock.advance(by: skew)
            let redis = try RedisCache<String, Int>(
                configuration: RedisTier.configuration(
                    endpoint: endpoint, namespace: namespace, masterKey: masterKey, clock: clock))
            return (try MultiCache<String, Int>([MemoryCache(clock: clock), redis]), redis)
        }
        let (loader, _) = try client(skew: .zero)
        let removers = [try client(skew: .seconds(10)), try client(skew: .seconds(-10))]
        let (_, observer) = try client(skew: .zero)
        var generator = SystemRandomNumberGenerator()
        var removedMidLoad = 0
        for run in 0..<1_000 {
            let key = "k\(run)"
            let tag = "tag-\(run % 7)"
            let (remover, _) = removers[Int.random(in: 0..<2, using: &generator)]
            let started = Gate()
            let release = Gate()
            let load = Task {
                try await loader.value(forKey: key, expiry: .hours(1), tags: [tag]) {
                    started.open()
                    try await release.wait()
                    return run
                }
            }
            let moment = Int.random(in: 0..<3, using: &generator)
            if moment == 0 { try await remover.removeAll(taggedWith: tag) }
            try await started.wait()
            if moment == 1 {
                try await remover.removeAll(taggedWith: tag)
                removedMidLoad += 1
            }
            release.open()
            _ = try await load.value
            if moment == 2 { try await remover.removeAll(taggedWith: tag) }
            if moment >= 1 {
                #expect(try await remover.value(forKey: key) == nil, "run \(run), removal at moment \(moment)")
                #expect(try await observer.value(forKey: key) == nil, "run \(run), removal at moment \(moment)")
            }
        }
        #expect(removedMidLoad > 200)
    }
}

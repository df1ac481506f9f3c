import CacheCore
import Foundation
import MemoryCache
import MultiCache
import StrataTestSupport
import Testing

@testable import RedisCache

/// A `MultiCache`'s loads store into a Redis tier through a load ticket (issue 27, part 4): a removal of the
/// key by another process while the loader runs keeps the loaded value out of Redis, whatever the load call
/// (plain, tags, options, bulk).
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote), .serialized, .timeLimit(.minutes(10)))
struct RedisMultiCacheLoadFenceTests {
    /// A `MultiCache([memory, redis])` without tracking (so only the ticket can fence a remote removal), and
    /// another instance of its namespace: another process, as far as Redis can tell.
    struct Fleet {
        let memory: MemoryCache<String, String>
        let redis: RedisCache<String, String>
        let multi: MultiCache<String, String>
        let other: RedisCache<String, String>

        init(_ server: RedisServer) throws {
            let namespace = RedisTier.namespace()
            let masterKey = RedisTier.randomMasterKey()
            var configuration = try RedisTier.configuration(
                port: server.port, namespace: namespace, masterKey: masterKey)
            configuration.tracksInvalidations = false
            memory = try MemoryCache()
            redis = try RedisCache(configuration: configuration)
            multi = try MultiCache(tiers: [.init(memory), .init(redis)])
            other = try RedisCache(configuration: configuration)
        }
    }

    enum Call: String, CaseIterable, Sendable {
        case plain, tags, options, tagsAndOptions, bulk, bulkWithTagsAndOptions
    }

    /// Loads `key` through `call`, running `loader` as the loader.
    static func load(
        _ key: String, through call: Call, in cache: MultiCache<String, String>,
        _ loader: @escaping @Sendable () async throws -> String
    ) async throws -> String? {
        let options = LoadOptions(failSafe: .init(maximumStaleness: .seconds(60)))
        switch call {
        case .plain: return try await cache.value(forKey: key, orLoad: loader)
        case .tags: return try await cache.value(forKey: key, tags: ["t"], orLoad: loader)
        case .options: return try await cache.value(forKey: key, options: options, orLoad: loader)
        case .tagsAndOptions: return try await cache.value(forKey: key, tags: ["t"], options: options, orLoad: loader)
        case .bulk:
            return try await cache.values(forKeys: [key]) { _ in [key: try await loader()] }[key]
        case .bulkWithTagsAndOptions:
            return try await cache.values(forKeys: [key], tags: ["t"], options: options) { _ in
                [key: try await loader()]
            }[key]
        }
    }

    @Test(arguments: Call.allCases)
    func aRemovalByAnotherProcessWhileTheLoaderRunsKeepsTheValueOutOfRedis(_ call: Call) async throws {
        let server = try RedisServer()
        let fleet = try Fleet(server)
        // When another process removes the key while this MultiCache's loader runs
        let loaded = try await Self.load("k", through: call, in: fleet.multi) {
            try await fleet.other.removeEntry(forKey: "k")
            return "loaded before the removal"
        }
        // Then the caller gets the value, and Redis does not keep it
        #expect(loaded == "loaded before the removal")
        #expect(try await fleet.other.value(forKey: "k") == nil)

        // And a load no removal races reaches Redis, with its tags where the call has them
        #expect(try await Self.load("fresh", through: call, in: fleet.multi) { "v" } == "v")
        let entry = try await fleet.other.entry(forKey: "fresh")
        #expect(entry?.value == "v")
        let tagged: Set<Call> = [.tags, .tagsAndOptions, .bulkWithTagsAndOptions]
        #expect(entry?.tags == (tagged.contains(call) ? ["t"] : []))
        #expect(fleet.memory.value(forKey: "fresh") == "v")
    }

    @Test func aBulkLoadWithTagsThenATagRemovalMissesInEveryTier() async throws {
        let server = try RedisServer()
        let fleet = try Fleet(server)
        let keys = (0..<20).map { "k\($0)" }
        let loaded = try await fleet.multi.values(forKeys: keys, tags: ["batch"]) { missing in
            Dictionary(uniqueKeysWithValues: missing.map { ($0, "v-\($0)") })
        }
        #expect(loaded.count == 20)
        #expect(try await fleet.other.value(forKey: "k3") == "v-k3")

        try await fleet.multi.removeAll(taggedWith: "batch")

        for key in keys {
            #expect(fleet.memory.value(forKey: key) == nil)
            #expect(try await fleet.redis.value(forKey: key) == nil)
            #expect(try await fleet.multi.value(forKey: key) == nil)
        }
    }
}

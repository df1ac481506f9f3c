import CacheCore
import Foundation
import Testing

@testable import RedisCache
@testable import RedisConnection

/// Issue 15, "connection count": several data connections, the choice of one per request, and the epoch
/// fence across them.
@Suite struct RedisConnectionPoolTests {
    @Test(arguments: [0, -1, 17, 100])
    func aConnectionCountOutside1To16IsAnInvalidArgument(count: Int) throws {
        var configuration = try RedisTier.configuration(port: 6379)
        configuration.connectionCount = count
        let error = #expect(throws: CacheError.self) { try RedisCache<String, Data>(configuration: configuration) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("connectionCount") == true)
    }

    @Test func theDefaultIsOneConnectionAndSixteenAreAccepted() async throws {
        #expect(RedisCacheConfiguration(namespace: "n").connectionCount == 1)
        var configuration = try RedisTier.configuration(port: 6379)
        let single = try RedisCache<String, Data>(configuration: configuration)
        #expect(single.route.pool.connections.count == 1)
        await single.close()
        configuration.connectionCount = 16
        let many = try RedisCache<String, Data>(configuration: configuration)
        #expect(many.route.pool.connections.count == 16)
        await many.close()
    }

    @Test func eachRequestGoesToTheConnectionWithFewestInFlightLowestFirst() async throws {
        // No request is sent: connections connect lazily, so no server is needed.
        let pool = try ConnectionPool(count: 3, configuration: .init(port: 6379))
        #expect(pool.choose() == 0)
        #expect(pool.choose() == 1)
        #expect(pool.choose() == 2)
        #expect(pool.choose() == 0)
        pool.release(1)
        #expect(pool.choose() == 1)
        pool.release(0)
        pool.release(0)
        pool.release(2)
        #expect(pool.choose() == 0)
        await pool.close()
    }
}

/// The pool against a real server: requests on every connection, the epoch fence across them.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisCachePoolServerTests {
    /// `removeAll()` on one connection, reads on another: a removeAll that returned is a miss for every
    /// later read on any connection, because each read carries the epoch in its own `MGET`, sent after
    /// the `INCR`'s reply arrived (the server runs commands one at a time).
    @Test func aRemoveAllThatReturnedIsAMissForLaterReadsOnEveryConnection() async throws {
        let server = try RedisServer()
        var configuration = try RedisTier.configuration(port: server.port)
        configuration.connectionCount = 2
        configuration.epochRefreshInterval = .seconds(3600)
        let cache = try RedisCache<String, Data>(configuration: configuration)
        let pool = cache.route.pool
        // Requests go to the connection with fewer in flight, connection 0 on a tie: holding a slot on 0
        // sends the next request to 1.
        func on<T>(_ index: Int, _ body: () async throws -> T) async throws -> T {
            guard index == 1 else { return try await body() }
            let held = pool.choose()
            defer { pool.release(held) }
            #expect(held == 0)
            return try await body()
        }
        for round in 0..<8 {
            let (writer, reader, clearer) = (round & 1, round >> 1 & 1, round >> 2 & 1)
            let value = Data("round \(round)".utf8)
            try await on(writer) { try await cache.setValue(value, forKey: "k") }
            #expect(try await on(reader) { try await cache.value(forKey: "k") } == value)
            try await on(clearer) { try await cache.removeAll() }
            #expect(try await on(0) { try await cache.value(forKey: "k") } == nil)
            #expect(try await on(1) { try await cache.value(forKey: "k") } == nil)
        }
        // Both connections carried requests.
        #expect(pool.connections.map(\.statistics.connects) == [1, 1])
        #expect(cache.health.connects == 2)
        #expect(cache.health.staleEpochEntries == 16)
        #expect(cache.statistics.hits == 8)
        await cache.close()
    }

    @Test func concurrentRequestsOnFourConnectionsAllSucceed() async throws {
        let server = try RedisServer()
        var configuration = try RedisTier.configuration(port: server.port)
        configuration.connectionCount = 4
        let cache = try RedisCache<Int, Data>(configuration: configuration)
        let big = Data(repeating: 7, count: 256 << 10)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for key in 0..<64 {
                group.addTask {
                    let value = key % 8 == 0 ? big : Data("\(key)".utf8)
                    try await cache.setValue(value, forKey: key)
                    #expect(try await cache.value(forKey: key) == value)
                }
            }
            try await group.waitForAll()
        }
        try await cache.removeAll()
        for key in 0..<64 { #expect(try await cache.value(forKey: key) == nil) }
        #expect(cache.statistics.hits == 64)
        #expect(cache.health.isBreakerOpen == false)
        await cache.close()
    }
}

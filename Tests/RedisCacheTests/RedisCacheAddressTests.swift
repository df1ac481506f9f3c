import CacheCore
import Foundation
import Testing

@testable import RedisCache

/// Issue 15, "address(es)": `host`:`port` first, then the fallback addresses in order, for the data
/// connections and the tracking connection alike.
@Suite struct RedisCacheAddressSettingTests {
    @Test(arguments: [("", 6379), ("127.0.0.1", 0), ("127.0.0.1", 70_000)])
    func aBadFallbackAddressIsAnInvalidArgument(host: String, port: Int) throws {
        var configuration = try RedisTier.configuration(port: 6379)
        configuration.fallbackAddresses = [.init(host: "127.0.0.1", port: 6380), .init(host: host, port: port)]
        let error = #expect(throws: CacheError.self) { try RedisCache<String, Data>(configuration: configuration) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("fallback address") == true)
    }

    @Test func noFallbackAddressesByDefaultAndAURLIsOneAddress() throws {
        let configuration = try RedisCacheConfiguration(url: "redis://127.0.0.1:6390/n")
        #expect(configuration.fallbackAddresses.isEmpty)
        #expect(RedisCacheConfiguration.Address(host: "h", port: 1).description == "h:1")
    }
}

@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisCacheAddressTests {
    @Test func aRefusedFirstAddressFallsBackToTheNextForDataAndTracking() async throws {
        let server = try RedisServer()
        let dead = try FreePort.find()  // nothing listens there: the connect is refused
        var configuration = try RedisTier.configuration(port: dead)
        configuration.fallbackAddresses = [.init(host: "127.0.0.1", port: server.port)]
        configuration.connectionCount = 2
        let cache = try RedisCache<String, Data>(configuration: configuration)
        try await cache.setValue(Data("v".utf8), forKey: "k")
        #expect(try await cache.value(forKey: "k") == Data("v".utf8))
        #expect(cache.health.connects == 1)
        #expect(cache.health.isBreakerOpen == false)
        let subscription = cache.addInvalidationObserver { _ in }
        let tracking = await RedisTesting.wait(timeout: .seconds(60)) { cache.health.isTracking }
        #expect(tracking != nil)
        subscription.cancel()
        await cache.close()
    }

    @Test func aReplicaFirstIsPassedOverForThePrimaryAfterIt() async throws {
        let primary = try RedisServer()
        let replica = try RedisServer(extraArguments: ["--replicaof", "127.0.0.1", String(primary.port)])
        var configuration = try RedisTier.configuration(port: replica.port)
        configuration.fallbackAddresses = [.init(host: "127.0.0.1", port: primary.port)]
        let cache = try RedisCache<String, Data>(configuration: configuration)
        try await cache.setValue(Data("v".utf8), forKey: "k")
        #expect(try await cache.value(forKey: "k") == Data("v".utf8))
        await cache.close()
    }

    @Test func whenNoAddressCanBeUsedTheFirstAddressesFailureIsReported() async throws {
        let primary = try RedisServer()
        let replica = try RedisServer(extraArguments: ["--replicaof", "127.0.0.1", String(primary.port)])
        var configuration = try RedisTier.configuration(port: replica.port)
        configuration.fallbackAddresses = [.init(host: "127.0.0.1", port: try FreePort.find())]
        let cache = try RedisCache<String, Data>(configuration: configuration)
        let error = await #expect(throws: CacheError.self) { try await cache.value(forKey: "k") }
        #expect(error?.code == .unsupportedServer)
        #expect((error?.cause as? RedisError)?.code == .replica)
        await cache.close()
    }
}

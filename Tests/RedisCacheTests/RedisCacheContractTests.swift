import CacheCore
import CacheTesting
import Foundation
import RedisCache
import Testing

/// The shared `Cache` contract against the Redis tier on a real server, each check in its own namespace,
/// over plain TCP and over TLS.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisCacheContractTests {
    @Test(arguments: CacheContract.Check.allCases, RedisEndpoint.Kind.allCases)
    func contract(_ check: CacheContract.Check, over kind: RedisEndpoint.Kind) async throws {
        let endpoint = try RedisEndpoint(kind)
        try await CacheContract.verify(check) { clock in
            // A fresh namespace per cache: the factory may be called more than once per check.
            var configuration = try RedisTier.configuration(port: endpoint.port, clock: clock)
            endpoint.configure(&configuration)
            // The checks' clock stands still while the server's TTLs run in real time: CI under
            // ThreadSanitizer once took over 90 s between a write and its read, and the server had dropped an
            // entry the check's clock still called live. The sealed expiry decides what a read returns.
            configuration.serverTimeToLivePadding = .seconds(3600)
            return try RedisCache<String, Data>(configuration: configuration)
        }
        withExtendedLifetime(endpoint) {}
    }

    @Test func theTrackingConnectionSpeaksTLSToo() async throws {
        // Given a tier over TLS (the server's plaintext port is not used by the tier)
        let endpoint = try RedisEndpoint(.tls)
        var configuration = try RedisTier.configuration(port: endpoint.port)
        endpoint.configure(&configuration)
        let cache = try RedisCache<String, Data>(configuration: configuration)
        let invalidated = Locked<[CacheInvalidation<String>]>([])
        let subscription = cache.addInvalidationObserver { event in invalidated.withLock { $0.append(event) } }
        // When the tracking connection is up, then it came up over TLS (a plaintext HELLO on the TLS port fails)
        let tracking = await RedisTesting.waitAsync(timeout: .seconds(60)) { cache.health.isTracking }
        #expect(tracking)
        // And a write through the tier comes back as a tracking push over that connection
        try await cache.setValue(Data("v".utf8), forKey: "k", expiry: .hours(1))
        let pushed = await RedisTesting.waitAsync(timeout: .seconds(60)) { !invalidated.withLock { $0.isEmpty } }
        #expect(pushed)
        #expect(try await cache.value(forKey: "k") == Data("v".utf8))
        subscription.cancel()
        await cache.close()
        withExtendedLifetime(endpoint) {}
    }
}

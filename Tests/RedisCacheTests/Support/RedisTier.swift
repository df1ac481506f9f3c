import Foundation
import RedisCache

/// Factories for the tier suites: caches with deadlines loose enough for a loaded 2-core machine. Each test
/// starts its own server (a few milliseconds) and stops it by pid when it ends; a server shared in a static
/// would outlive the test process.
enum RedisTier {
    /// A fresh namespace name.
    static func namespace() -> String { "t-" + UUID().uuidString.lowercased() }

    /// A configuration for `port` with a random master key unless one is given.
    static func configuration(
        port: Int, namespace: String = RedisTier.namespace(), masterKey: Data? = nil,
        clock: any CacheClock = SystemClock(), observer: CacheObserver? = nil
    ) throws -> RedisCacheConfiguration {
        var configuration = RedisCacheConfiguration(
            port: port, namespace: namespace,
            masterKeySource: .masterKey(masterKey ?? randomMasterKey()),
            clock: clock, observer: observer)
        configuration.connectTimeout = .seconds(2)
        configuration.readTimeout = .seconds(5)
        configuration.writeTimeout = .seconds(5)
        configuration.keepAliveInterval = .seconds(30)
        return configuration
    }

    /// ``configuration(port:namespace:masterKey:clock:observer:)`` pointed at `endpoint` (its port, and over
    /// TLS the test CA), so one test runs over plain TCP and TLS alike.
    static func configuration(
        endpoint: RedisEndpoint, namespace: String = RedisTier.namespace(), masterKey: Data? = nil,
        clock: any CacheClock = SystemClock(), observer: CacheObserver? = nil
    ) throws -> RedisCacheConfiguration {
        var configuration = try configuration(
            port: endpoint.port, namespace: namespace, masterKey: masterKey, clock: clock, observer: observer)
        endpoint.configure(&configuration)
        return configuration
    }

    /// 32 random bytes for a master key.
    static func randomMasterKey() -> Data {
        Data((0..<32).map { _ in UInt8.random(in: 0...255) })
    }
}

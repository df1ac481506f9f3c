import CacheTesting
import Foundation
import RedisCache
import Testing

/// The shared `Cache` contract against the Redis tier on a real server, each check in its own namespace.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisCacheContractTests {
    @Test(arguments: CacheContract.Check.allCases)
    func contract(_ check: CacheContract.Check) async throws {
        let server = try RedisServer()
        try await CacheContract.verify(check) { clock in
            // A fresh namespace per cache: the factory may be called more than once per check.
            try RedisCache<String, Data>(configuration: try RedisTier.configuration(port: server.port, clock: clock))
        }
    }
}

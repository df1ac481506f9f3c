import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import Testing

/// The shared `Cache` contract, run against an exact-LRU and a sharded memory cache.
@Suite struct MemoryCacheContractTests {
    @Test(arguments: CacheContract.Check.allCases)
    func keepsTheCacheContract(_ check: CacheContract.Check) async throws {
        try await CacheContract.verify(check) { clock in
            try MemoryCache<String, Data>(countLimit: 100, clock: clock)
        }
    }

    @Test(arguments: CacheContract.Check.allCases)
    func keepsTheCacheContractWhenSharded(_ check: CacheContract.Check) async throws {
        try await CacheContract.verify(check) { clock in
            try MemoryCache<String, Data>(countLimit: 400, costLimit: 4_000_000, shardCount: 4, clock: clock) {
                $0.count
            }
        }
    }
}

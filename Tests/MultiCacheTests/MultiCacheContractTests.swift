import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import MultiCache
import Testing

@Suite struct MultiCacheContractTests {
    @Test(arguments: CacheContract.Check.allCases)
    func twoTiersKeepTheCacheContract(_ check: CacheContract.Check) async throws {
        try await CacheContract.verify(check) { clock in
            try MultiCache<String, Data>(tiers: [
                .init(try makeMemoryTier(clock: clock), name: "memory"),
                .init(try makeSlowTier(clock: clock), name: "disk"),
            ])
        }
    }

    @Test(arguments: CacheContract.Check.allCases)
    func nestedMultiCacheKeepsTheCacheContract(_ check: CacheContract.Check) async throws {
        try await CacheContract.verify(check) { clock in
            let inner = try MultiCache<String, Data>([try makeMemoryTier(clock: clock), try makeSlowTier(clock: clock)])
            return try MultiCache<String, Data>([try makeMemoryTier(clock: clock), inner])
        }
    }

    @Test(arguments: CacheContract.Check.allCases)
    func memoryTierReadWithoutAwaitKeepsTheCacheContract(_ check: CacheContract.Check) async throws {
        // A concrete MemoryCache as tier 0 is read through its synchronous API (the fast path).
        try await CacheContract.verify(check) { clock in
            try MultiCache<String, Data>(tiers: [
                .init(try MemoryCache<String, Data>(clock: clock), name: "memory"),
                .init(try makeSlowTier(clock: clock), name: "disk"),
            ])
        }
    }
}

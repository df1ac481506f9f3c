import CacheCore
import CacheTesting
import Foundation
import Testing

/// The test doubles' own storage keeps the `Cache` contract, plain and wrapped.
@Suite struct ContractConformanceTests {
    @Test(arguments: CacheContract.Check.allCases)
    func faultInjectingCacheKeepsTheContract(_ check: CacheContract.Check) async throws {
        try await CacheContract.verify(check) { clock in FaultInjectingCache<String, Data>(clock: clock) }
    }

    @Test(arguments: CacheContract.Check.allCases)
    func recordingCacheKeepsTheContract(_ check: CacheContract.Check) async throws {
        try await CacheContract.verify(check) { clock in RecordingCache<String, Data>(clock: clock) }
    }

    @Test(arguments: CacheContract.Check.allCases)
    func stackedDoublesKeepTheContract(_ check: CacheContract.Check) async throws {
        try await CacheContract.verify(check) { clock in
            RecordingCache(wrapping: FaultInjectingCache<String, Data>(clock: clock))
        }
    }

    @Test func verifyAllPassesForAConformingCache() async throws {
        try await CacheContract.verifyAll { clock in RecordingCache<String, Data>(clock: clock) }
    }
}

import CacheCore
import DiskCache
import Foundation
import MemoryCache
import MultiCache

/// multicache-hit: an async read that hits tier 0 of a MultiCache (a MemoryCache over an encrypted
/// DiskCache), against the same async read made directly on the MemoryCache. The ratio is what the
/// composition costs on its fastest path: the tier loop, the statistics and the write-back fence.
///
/// Both loops run in one nonisolated async function, so neither pays an executor hop per call.
enum MultiCacheHit {
    static let scenario = Scenario("multicache-hit") { context in
        // Every key is also written to the disk tier (one file each), so --quick keeps the set small.
        let keyCount = context.size(full: 10_000, quick: 2_000)
        let keys = DiskFixture.keys(keyCount)
        let value = DiskFixture.randomBytes(100, seed: 0x3C)
        let memory = try MemoryCache<String, Data>()
        let disk = try DiskFixture.openCache(in: try context.makeDirectory("multicache-disk"), engine: .files)
        let multi = try MultiCache<String, Data>(tiers: [.init(memory, name: "memory"), .init(disk, name: "disk")])
        for key in keys { try await multi.setValue(value, forKey: key, expiry: .never) }
        let lookups = [Int].randomIndices(context.size(full: 200_000, quick: 50_000), below: keyCount, seed: 0x3D)
            .map { keys[$0] }
        let expectedBytes = lookups.count * value.count

        let (strata, baseline) = try await context.alternatingRounds.runAsync(
            strata: {
                var bytes = 0
                let perOperation = try await nanosecondsPerOperationAsync(lookups.count) {
                    for key in lookups { bytes &+= try await multi.value(forKey: key)?.count ?? 0 }
                }
                try expect(bytes == expectedBytes, "MultiCache returned \(bytes) bytes")
                return perOperation
            },
            baseline: {
                var bytes = 0
                let perOperation = try await nanosecondsPerOperationAsync(lookups.count) {
                    for key in lookups { bytes &+= try await readAsync(memory, key)?.count ?? 0 }
                }
                try expect(bytes == expectedBytes, "MemoryCache returned \(bytes) bytes")
                return perOperation
            }
        )
        let tierHits = multi.tierStatistics.map(\.hits)
        return [
            ScenarioResult(
                name: "multicache-hit",
                unit: .nanosecondsPerOperation,
                strata: strata,
                baseline: baseline,
                target: .ratioAtMost(1.5),
                notes: [
                    "\(keyCount) keys, 100-byte Data values, every read a tier-0 hit (tier hits \(tierHits)); "
                        + "baseline = `await memory.value(forKey:)` through the Cache protocol's async API"
                ]
            )
        ]
    }

    /// The async read the `Cache` protocol offers, called on the concrete MemoryCache (the synchronous
    /// overload of the same name is not what a MultiCache tier call is compared with).
    @inline(__always)
    private static func readAsync<C: Cache>(_ cache: C, _ key: C.Key) async throws -> C.Value? {
        try await cache.value(forKey: key)
    }
}

import DiskCache
import Foundation

/// disk-set-evict: writing new 1 KiB values into a full, count-limited DiskCache, so that writes keep
/// evicting, with the default low-water mark (`lowWaterFraction` 0.8: a write that passes the limit trims
/// to 80% of it, so one trim serves a fifth of the limit's writes) against the same cache evicting only to
/// its limit (`lowWaterFraction` 1: every write past the limit trims). A trim takes the store's `flock`
/// and rescans the folder (O(*n*) `lstat`s), so the row shows what the amortisation buys.
enum DiskSetEvict {
    static let scenario = Scenario("disk-set-evict") { context in
        let limit = context.size(full: 1_000, quick: 300)
        let writes = 2 * limit
        let value = DiskFixture.randomBytes(1024, seed: 9)
        let lowWater = try openFull(try context.makeDirectory("disk-set-evict-low-water"), limit: limit, fraction: 0.8)
        let exact = try openFull(try context.makeDirectory("disk-set-evict-exact"), limit: limit, fraction: 1)
        var round = 0

        let (strata, baseline) = try context.diskRounds.run(
            strata: {
                round += 1
                let keys = DiskFixture.keys(writes, prefix: "low-\(round)")
                return try nanosecondsPerOperation(writes) {
                    for key in keys { try lowWater.setValue(value, forKey: key) }
                }
            },
            baseline: {
                let keys = DiskFixture.keys(writes, prefix: "exact-\(round)")
                return try nanosecondsPerOperation(writes) {
                    for key in keys { try exact.setValue(value, forKey: key) }
                }
            }
        )
        return [
            ScenarioResult(
                name: "disk-set-evict",
                unit: .nanosecondsPerOperation,
                strata: strata,
                baseline: baseline,
                target: .none,
                notes: [
                    "countLimit \(limit), \(writes) new 1024-byte values a round into a full store; strata = "
                        + "lowWaterFraction 0.8 (the default), baseline = 1.0 (evict to the limit on every write)"
                ]
            )
        ]
    }

    /// A store limited to `limit` entries, filled to it.
    private static func openFull(_ directory: URL, limit: Int, fraction: Double) throws -> DiskCache<String, Data> {
        let cache = try DiskCache<String, Data>(
            configuration: DiskCacheConfiguration(
                name: "strata-bench", directory: directory, countLimit: limit, lowWaterFraction: fraction,
                masterKeySource: .masterKey(DiskFixture.masterKey), engine: .files),
            codec: .data)
        let value = DiskFixture.randomBytes(1024, seed: 8)
        for key in DiskFixture.keys(limit, prefix: "fill") { try cache.setValue(value, forKey: key) }
        return cache
    }
}

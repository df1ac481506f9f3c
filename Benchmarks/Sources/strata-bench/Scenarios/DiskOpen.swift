import DiskCache
import Foundation

/// disk-open-100k: opening an existing encrypted store of 100,000 entries and serving its first hit, in
/// milliseconds, against listing the same folder (recursively) with FileManager — the least a store
/// that scans its folder on open would pay. `--quick` uses 10,000 entries.
enum DiskOpen {
    static let scenario = Scenario("disk-open-100k", "disk-open-100k-first-write") { context in
        let entryCount = context.size(full: 100_000, quick: 10_000)
        let directory = try context.makeDirectory("disk-open")
        let keys = DiskFixture.keys(entryCount)
        let value = DiskFixture.randomBytes(100, seed: 100)
        do {
            let cache = try DiskFixture.openCache(in: directory, engine: .files)
            for key in keys { try cache.setValue(value, forKey: key) }
        }
        let probe = keys[entryCount / 2]

        let rounds = AlternatingRounds(warmUpRounds: 1, rounds: context.quick ? 3 : 7)
        let (strata, baseline) = try rounds.run(
            strata: {
                var cache: DiskCache<String, Data>?
                var hit: Data?
                let elapsed = try measureNanoseconds {
                    cache = try DiskFixture.openCache(in: directory, engine: .files)
                    hit = try cache?.value(forKey: probe)
                }
                try expect(hit == value, "the first read after open missed")
                // Closing the store (its deinit) is not part of "open and serve the first hit".
                withExtendedLifetime(cache) {}
                return elapsed / 1e6
            },
            baseline: {
                var listed = 0
                let elapsed = try measureNanoseconds {
                    listed = try FileManager.default.subpathsOfDirectory(atPath: directory.path).count
                }
                try expect(listed >= entryCount, "listing found \(listed) files")
                return elapsed / 1e6
            }
        )
        // A store with a byte limit learns its size on the first write after open (it scans the folder),
        // so that cold start is measured too, for information.
        let limitedRounds = AlternatingRounds(warmUpRounds: 0, rounds: context.quick ? 1 : 3)
        var extraKey = 0
        let (limitedStrata, limitedBaseline) = try limitedRounds.run(
            strata: {
                var cache: DiskCache<String, Data>?
                let elapsed = try measureNanoseconds {
                    cache = try DiskFixture.openCache(in: directory, byteLimit: 1 << 40, engine: .files)
                    try cache?.setValue(value, forKey: "extra-\(extraKey)")
                }
                extraKey += 1
                withExtendedLifetime(cache) {}
                return elapsed / 1e6
            },
            baseline: {
                try measureNanoseconds { _ = try FileManager.default.subpathsOfDirectory(atPath: directory.path) } / 1e6
            }
        )
        return [
            ScenarioResult(
                name: "disk-open-100k",
                unit: .milliseconds,
                strata: strata,
                baseline: baseline,
                target: Target(description: "first hit ≤ 100 ms") { $0.strata.median <= 100 },
                notes: ["\(entryCount) entries of 100 bytes, page cache warm; baseline = recursive FileManager listing"]
            ),
            ScenarioResult(
                name: "disk-open-100k-first-write",
                unit: .milliseconds,
                strata: limitedStrata,
                baseline: limitedBaseline,
                target: .none,
                notes: [
                    "the same store opened with byteLimit set, timed to the end of its first write "
                        + "(the write that makes it scan the folder for sizes and recency)"
                ]
            ),
        ]
    }
}

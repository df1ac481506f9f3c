import DiskCache
import Foundation

/// disk-set-4k: storing 4 KiB values under 10k keys in an encrypted DiskCache, against writing the same
/// bytes to a temporary file and renaming it into place with plain POSIX calls. Both without fsync (the
/// DiskCache default, `.none`); the keys cycle, so after the first pass every write replaces a file. The
/// floor (``FloorStore``) adds to the plain write only the HMAC, nonce and AES-256-GCM encryption any
/// encrypted cache must do, to show how much of the ratio no implementation can remove.
enum DiskSet4K {
    static let scenario = Scenario("disk-set-4k") { context in
        let keyCount = context.size(full: 10_000, quick: 500)
        let keys = DiskFixture.keys(keyCount)
        let value = DiskFixture.randomBytes(4096, seed: 4)
        let cache = try DiskFixture.openCache(in: try context.makeDirectory("disk-set-4k-strata"), engine: .files)
        let plain = PlainFileStore(directory: try context.makeDirectory("disk-set-4k-plain"), fsync: false)
        let floorStore = try FloorStore.open(in: try context.makeDirectory("disk-set-4k-floor"))

        let (strata, baseline, floor) = try context.diskRounds.run(
            strata: {
                try nanosecondsPerOperation(keyCount) {
                    for key in keys { try cache.setValue(value, forKey: key) }
                }
            },
            baseline: {
                try nanosecondsPerOperation(keyCount) {
                    for key in keys { try plain.write(value, name: key) }
                }
            },
            floor: floorStore.map { store in
                {
                    try nanosecondsPerOperation(keyCount) {
                        for key in keys { try store.write(value, key: key) }
                    }
                }
            }
        )
        return [
            ScenarioResult(
                name: "disk-set-4k",
                unit: .nanosecondsPerOperation,
                strata: strata,
                baseline: baseline,
                target: .ratioAtMost(1.2),
                extras: FloorFigures.extras(
                    unit: .nanosecondsPerOperation, strata: strata, baseline: baseline, floor: floor),
                notes: ["\(keyCount) keys, 4096-byte values, durability none (no fsync) on both sides"]
                    + FloorFigures.notes(
                        unit: .nanosecondsPerOperation, baseline: baseline, floor: floor, ratioLimit: 1.2)
            )
        ]
    }
}

import DiskCache
import Foundation

/// disk-get-4k: reading 4 KiB values under 10k keys, in random order, from an encrypted DiskCache (each
/// read opens, authenticates and decrypts one file), against reading the same number of plain files.
/// The page cache is warm on both sides after the warm-up round. The floor (``FloorStore``) adds to the
/// plain read only the HMAC file name and the AES-256-GCM verification any encrypted cache must do.
enum DiskGet4K {
    static let scenario = Scenario("disk-get-4k") { context in
        let keyCount = context.size(full: 10_000, quick: 1_000)
        let keys = DiskFixture.keys(keyCount)
        let value = DiskFixture.randomBytes(4096, seed: 44)
        let cache = try DiskFixture.openCache(in: try context.makeDirectory("disk-get-4k-strata"), engine: .files)
        let plain = PlainFileStore(directory: try context.makeDirectory("disk-get-4k-plain"), fsync: false)
        let floorStore = try FloorStore.open(in: try context.makeDirectory("disk-get-4k-floor"))
        for key in keys {
            try cache.setValue(value, forKey: key)
            try plain.write(value, name: key)
            try floorStore?.write(value, key: key)
        }
        let lookups = [Int].shuffledIndices(keyCount, seed: 0x4B).map { keys[$0] }

        let (strata, baseline, floor) = try context.diskRounds.run(
            strata: {
                try nanosecondsPerOperation(keyCount) {
                    var bytes = 0
                    for key in lookups { bytes &+= try cache.value(forKey: key)?.count ?? 0 }
                    try expect(bytes == keyCount * 4096, "DiskCache returned \(bytes) bytes")
                }
            },
            baseline: {
                try nanosecondsPerOperation(keyCount) {
                    var bytes = 0
                    for key in lookups { bytes &+= try plain.read(name: key)?.count ?? 0 }
                    try expect(bytes == keyCount * 4096, "plain files returned \(bytes) bytes")
                }
            },
            floor: floorStore.map { store in
                {
                    try nanosecondsPerOperation(keyCount) {
                        var bytes = 0
                        for key in lookups { bytes &+= try store.read(key: key)?.count ?? 0 }
                        try expect(bytes == keyCount * 4096, "floor files returned \(bytes) bytes")
                    }
                }
            }
        )
        return [
            ScenarioResult(
                name: "disk-get-4k",
                unit: .nanosecondsPerOperation,
                strata: strata,
                baseline: baseline,
                target: .ratioAtMost(1.2),
                extras: FloorFigures.extras(
                    unit: .nanosecondsPerOperation, strata: strata, baseline: baseline, floor: floor),
                notes: ["\(keyCount) keys, 4096-byte values, random order, page cache warm"]
                    + FloorFigures.notes(
                        unit: .nanosecondsPerOperation, baseline: baseline, floor: floor, ratioLimit: 1.2)
            )
        ]
    }
}

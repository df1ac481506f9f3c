import DiskCache
import Foundation

/// disk-get-1m: reading 1 MiB values from an encrypted DiskCache with the page cache warm, in MB/s
/// (10^6 bytes per second), against plain reads of the same files' worth of bytes. This is the cipher's
/// and the copy path's throughput, with the disk out of the picture. The floor (``FloorStore``) is the plain
/// read plus AES-256-GCM decryption in place: the cipher's own speed bounds every encrypted cache's.
enum DiskGet1M {
    static let scenario = Scenario("disk-get-1m") { context in
        let valueCount = context.size(full: 48, quick: 8)
        let valueSize = 1 << 20
        let keys = DiskFixture.keys(valueCount, prefix: "large")
        let value = DiskFixture.randomBytes(valueSize, seed: 1 << 20)
        let cache = try DiskFixture.openCache(in: try context.makeDirectory("disk-get-1m-strata"), engine: .files)
        let plain = PlainFileStore(directory: try context.makeDirectory("disk-get-1m-plain"), fsync: false)
        let floorStore = try FloorStore.open(in: try context.makeDirectory("disk-get-1m-floor"))
        for key in keys {
            try cache.setValue(value, forKey: key)
            try plain.write(value, name: key)
            try floorStore?.write(value, key: key)
        }
        let totalBytes = Double(valueCount * valueSize)

        let (strata, baseline, floor) = try context.diskRounds.run(
            strata: {
                var bytes = 0
                let elapsed = try measureNanoseconds {
                    for key in keys { bytes &+= try cache.value(forKey: key)?.count ?? 0 }
                }
                try expect(bytes == valueCount * valueSize, "DiskCache returned \(bytes) bytes")
                return totalBytes / elapsed * 1e3
            },
            baseline: {
                var bytes = 0
                let elapsed = try measureNanoseconds {
                    for key in keys { bytes &+= try plain.read(name: key)?.count ?? 0 }
                }
                try expect(bytes == valueCount * valueSize, "plain files returned \(bytes) bytes")
                return totalBytes / elapsed * 1e3
            },
            floor: floorStore.map { store in
                {
                    var bytes = 0
                    let elapsed = try measureNanoseconds {
                        for key in keys { bytes &+= try store.read(key: key)?.count ?? 0 }
                    }
                    try expect(bytes == valueCount * valueSize, "floor files returned \(bytes) bytes")
                    return totalBytes / elapsed * 1e3
                }
            }
        )
        return [
            ScenarioResult(
                name: "disk-get-1m",
                unit: .megabytesPerSecond,
                strata: strata,
                baseline: baseline,
                target: Target(description: "≥ 1000 MB/s and ratio ≤ 1.5") {
                    $0.strata.median >= 1000 && $0.ratio <= 1.5
                },
                extras: FloorFigures.extras(
                    unit: .megabytesPerSecond, strata: strata, baseline: baseline, floor: floor),
                notes: ["\(valueCount) values of 1 MiB, page cache warm; MB = 10^6 bytes"]
                    + FloorFigures.notes(unit: .megabytesPerSecond, baseline: baseline, floor: floor, ratioLimit: 1.5)
            )
        ]
    }
}

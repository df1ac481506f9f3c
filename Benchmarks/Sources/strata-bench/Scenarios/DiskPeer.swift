import DiskCache
import Foundation

/// disk-peer-{set,get}-{100b,4k}: DiskCache's throughput in operations per second on the workload that
/// `Benchmarks/diskcache_peer.py` runs against python-diskcache (set every key once, then get every key
/// in random order; 10k keys, 100-byte or 4 KiB values, no fsync). The script compares the numbers; the
/// baseline printed here is plain file I/O, for scale, and the floor (``FloorStore``: plain I/O plus the
/// cryptography any AES-256-GCM cache must do) bounds the speed-up over python-diskcache any such cache
/// with one file per entry could reach.
enum DiskPeer {
    static let scenario = Scenario(
        "disk-peer-set-100b", "disk-peer-get-100b", "disk-peer-set-4k", "disk-peer-get-4k"
    ) { context in
        let keyCount = context.size(full: 10_000, quick: 500)
        let keys = DiskFixture.keys(keyCount)
        let lookups = [Int].shuffledIndices(keyCount, seed: 0x9EE2).map { keys[$0] }
        var results: [ScenarioResult] = []
        for (label, size) in [("100b", 100), ("4k", 4096)] {
            let value = DiskFixture.randomBytes(size, seed: UInt64(size))
            let cache = try DiskFixture.openCache(in: try context.makeDirectory("disk-peer-\(label)-strata"))
            let plain = PlainFileStore(directory: try context.makeDirectory("disk-peer-\(label)-plain"), fsync: false)
            let floorStore = try FloorStore.open(in: try context.makeDirectory("disk-peer-\(label)-floor"))
            let operations = Double(keyCount)

            let sets = try context.diskRounds.run(
                strata: {
                    operations / (try measureNanoseconds { for key in keys { try cache.setValue(value, forKey: key) } })
                        * 1e9
                },
                baseline: {
                    operations / (try measureNanoseconds { for key in keys { try plain.write(value, name: key) } })
                        * 1e9
                },
                floor: floorStore.map { store in
                    {
                        operations / (try measureNanoseconds { for key in keys { try store.write(value, key: key) } })
                            * 1e9
                    }
                }
            )
            let gets = try context.diskRounds.run(
                strata: {
                    var bytes = 0
                    let elapsed = try measureNanoseconds {
                        for key in lookups { bytes &+= try cache.value(forKey: key)?.count ?? 0 }
                    }
                    try expect(bytes == keyCount * size, "DiskCache returned \(bytes) bytes")
                    return operations / elapsed * 1e9
                },
                baseline: {
                    var bytes = 0
                    let elapsed = try measureNanoseconds {
                        for key in lookups { bytes &+= try plain.read(name: key)?.count ?? 0 }
                    }
                    try expect(bytes == keyCount * size, "plain files returned \(bytes) bytes")
                    return operations / elapsed * 1e9
                },
                floor: floorStore.map { store in
                    {
                        var bytes = 0
                        let elapsed = try measureNanoseconds {
                            for key in lookups { bytes &+= try store.read(key: key)?.count ?? 0 }
                        }
                        try expect(bytes == keyCount * size, "floor files returned \(bytes) bytes")
                        return operations / elapsed * 1e9
                    }
                }
            )
            let note = "\(keyCount) keys, \(size)-byte values; compared with python-diskcache by diskcache_peer.py"
            for (operation, summaries) in [("set", sets), ("get", gets)] {
                results.append(
                    ScenarioResult(
                        name: "disk-peer-\(operation)-\(label)",
                        unit: .operationsPerSecond,
                        strata: summaries.strata,
                        baseline: summaries.baseline,
                        target: .none,
                        extras: FloorFigures.extras(
                            unit: .operationsPerSecond, strata: summaries.strata, baseline: summaries.baseline,
                            floor: summaries.floor),
                        notes: [note]
                            + FloorFigures.notes(
                                unit: .operationsPerSecond, baseline: summaries.baseline, floor: summaries.floor,
                                ratioLimit: nil)
                    )
                )
            }
        }
        return results
    }
}

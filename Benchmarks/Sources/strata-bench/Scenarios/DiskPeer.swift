import DiskCache
import Foundation

/// disk-peer-{set,get}-{100b,4k}: DiskCache's throughput in operations per second on the workload that
/// `Benchmarks/diskcache_peer.py` runs against python-diskcache (set every key once, then get every key
/// in random order; 10k keys, 100-byte or 4 KiB values, no fsync). The script compares the numbers; the
/// baseline printed here is plain file I/O, for scale, and the floor (``FloorStore``: plain I/O plus the
/// cryptography any AES-256-GCM cache must do) bounds the speed-up over python-diskcache any such cache
/// with one file per entry could reach.
///
/// disk-peer-sqlite-{set,get}-{100b,4k}: the same workload on a store of the SQLite engine
/// (`engine: .sqlite`), measured in the same rounds as the rows above (Strata's file engine, plain files,
/// the floor and the SQLite engine in rotating order); its baseline is the file engine's figure from those
/// rounds, so its ratio is the file engine's ops/s over the SQLite engine's (below 1: the SQLite engine is
/// faster). The script compares its ops/s with python-diskcache's too, and the sealed-row floor's
/// (``SQLiteFloorStore``, measured in the same rounds), which bounds what any store of sealed rows under the
/// engine's rules could reach.
enum DiskPeer {
    static let scenario = Scenario(
        "disk-peer-set-100b", "disk-peer-get-100b", "disk-peer-set-4k", "disk-peer-get-4k",
        "disk-peer-sqlite-set-100b", "disk-peer-sqlite-get-100b", "disk-peer-sqlite-set-4k",
        "disk-peer-sqlite-get-4k"
    ) { context in
        let keyCount = context.size(full: 10_000, quick: 500)
        let keys = DiskFixture.keys(keyCount)
        let lookups = [Int].shuffledIndices(keyCount, seed: 0x9EE2).map { keys[$0] }
        var results: [ScenarioResult] = []
        for (label, size) in [("100b", 100), ("4k", 4096)] {
            let value = DiskFixture.randomBytes(size, seed: UInt64(size))
            let cache = try DiskFixture.openCache(
                in: try context.makeDirectory("disk-peer-\(label)-strata"), engine: .files)
            let sqlite = try DiskFixture.openCache(
                in: try context.makeDirectory("disk-peer-\(label)-sqlite"), engine: .sqlite)
            let plain = PlainFileStore(directory: try context.makeDirectory("disk-peer-\(label)-plain"), fsync: false)
            let floorStore = try FloorStore.open(in: try context.makeDirectory("disk-peer-\(label)-floor"))
            let rowFloor = try SQLiteFloorStore.open(in: try context.makeDirectory("disk-peer-\(label)-row-floor"))
            let operations = Double(keyCount)

            func setRate(_ store: DiskCache<String, Data>) throws -> Double {
                operations / (try measureNanoseconds { for key in keys { try store.setValue(value, forKey: key) } })
                    * 1e9
            }
            func getRate(_ store: DiskCache<String, Data>, _ what: String) throws -> Double {
                var bytes = 0
                let elapsed = try measureNanoseconds {
                    for key in lookups { bytes &+= try store.value(forKey: key)?.count ?? 0 }
                }
                try expect(bytes == keyCount * size, "\(what) returned \(bytes) bytes")
                return operations / elapsed * 1e9
            }
            let sets = try Self.rounds(
                context,
                strata: { try setRate(cache) },
                baseline: {
                    operations / (try measureNanoseconds { for key in keys { try plain.write(value, name: key) } })
                        * 1e9
                },
                floor: floorStore.map { store in
                    {
                        operations / (try measureNanoseconds { for key in keys { try store.write(value, key: key) } })
                            * 1e9
                    }
                },
                sqlite: { try setRate(sqlite) },
                rowFloor: rowFloor.map { store in
                    {
                        operations / (try measureNanoseconds { for key in keys { try store.write(value, key: key) } })
                            * 1e9
                    }
                }
            )
            let gets = try Self.rounds(
                context,
                strata: { try getRate(cache, "DiskCache") },
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
                },
                sqlite: { try getRate(sqlite, "DiskCache (SQLite engine)") },
                rowFloor: rowFloor.map { store in
                    {
                        var bytes = 0
                        let elapsed = try measureNanoseconds {
                            for key in lookups { bytes &+= try store.read(key: key, capacity: size)?.count ?? 0 }
                        }
                        try expect(bytes == keyCount * size, "the sealed-row floor returned \(bytes) bytes")
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
            for (operation, summaries) in [("set", sets), ("get", gets)] {
                results.append(
                    ScenarioResult(
                        name: "disk-peer-sqlite-\(operation)-\(label)",
                        unit: .operationsPerSecond,
                        strata: summaries.sqlite,
                        baseline: summaries.strata,
                        target: .none,
                        extras: [("plain ops/s", summaries.baseline.median)]
                            + (summaries.rowFloor.map { [("floor ops/s", $0.median)] } ?? []),
                        notes: [
                            note,
                            "strata = the SQLite engine; baseline = the file engine (disk-peer-\(operation)-\(label)) "
                                + "in the same rounds; ratio = file engine ops/s over the SQLite engine's",
                        ]
                            + (summaries.rowFloor.map {
                                [
                                    String(
                                        format:
                                            "sealed-row floor (SQLite + HMAC + AES-256-GCM, no Strata code): %.0f ops/s",
                                        $0.median)
                                ]
                            } ?? [])
                    )
                )
            }
        }
        return results
    }

    /// The batches of one workload in rotating rounds (``AlternatingRounds/run(variants:)``): the file engine,
    /// plain files, the file floor, the SQLite engine and the sealed-row floor (the floors only where built).
    private static func rounds(
        _ context: RunContext,
        strata: @escaping () throws -> Double,
        baseline: @escaping () throws -> Double,
        floor: (() throws -> Double)?,
        sqlite: @escaping () throws -> Double,
        rowFloor: (() throws -> Double)?
    ) throws -> (strata: Summary, baseline: Summary, floor: Summary?, sqlite: Summary, rowFloor: Summary?) {
        let variants = [strata, baseline] + (floor.map { [$0] } ?? []) + [sqlite] + (rowFloor.map { [$0] } ?? [])
        let summaries = try context.diskRounds.run(variants: variants)
        let sqliteIndex = floor == nil ? 2 : 3
        return (
            summaries[0], summaries[1], floor == nil ? nil : summaries[2], summaries[sqliteIndex],
            rowFloor == nil ? nil : summaries[sqliteIndex + 1]
        )
    }
}

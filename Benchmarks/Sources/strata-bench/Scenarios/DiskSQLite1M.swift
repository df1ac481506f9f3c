import DiskCache
import Foundation

/// disk-sqlite-get-1m / disk-sqlite-set-1m: 1 MiB values on a store of the SQLite engine (`engine: .sqlite`),
/// in MB/s (10^6 bytes per second), against the same operations on a store of the file engine in the same
/// rounds. A value that large is sealed into a file of its own under `large/` with a row naming it
/// (``DiskCacheConfiguration/Engine/sqliteRowLimit``), so these rows show what the row and its transaction
/// add to the file engine's one file per entry. The get workload is disk-get-1m's (values written once,
/// page cache warm); the set workload stores every key once a round (after the warm-up round every set
/// replaces an entry, and its old file is unlinked). Both without fsync.
///
/// The target is the issue's: the SQLite engine at least 0.9× the file engine's MB/s, i.e. ratio (the file
/// engine's MB/s over the SQLite engine's) at most 1/0.9.
enum DiskSQLite1M {
    static let scenario = Scenario("disk-sqlite-get-1m", "disk-sqlite-set-1m") { context in
        let valueCount = context.size(full: 48, quick: 8)
        let valueSize = 1 << 20
        let keys = DiskFixture.keys(valueCount, prefix: "large")
        let value = DiskFixture.randomBytes(valueSize, seed: 1 << 20)
        let totalBytes = Double(valueCount * valueSize)
        let target = Target(description: "SQLite ≥ 0.9× files (ratio ≤ 1.111)") { $0.ratio <= 1 / 0.9 }
        let note = "\(valueCount) values of 1 MiB, durability none; MB = 10^6 bytes; strata = the SQLite engine, "
            + "baseline = the file engine in the same rounds; ratio = file engine MB/s over the SQLite engine's"

        func getRate(_ store: DiskCache<String, Data>, _ what: String) throws -> Double {
            var bytes = 0
            let elapsed = try measureNanoseconds {
                for key in keys { bytes &+= try store.value(forKey: key)?.count ?? 0 }
            }
            try expect(bytes == valueCount * valueSize, "\(what) returned \(bytes) bytes")
            return totalBytes / elapsed * 1e3
        }
        func setRate(_ store: DiskCache<String, Data>) throws -> Double {
            totalBytes / (try measureNanoseconds { for key in keys { try store.setValue(value, forKey: key) } }) * 1e3
        }

        let getFiles = try DiskFixture.openCache(
            in: try context.makeDirectory("disk-sqlite-get-1m-files"), engine: .files)
        let getSQLite = try DiskFixture.openCache(
            in: try context.makeDirectory("disk-sqlite-get-1m-sqlite"), engine: .sqlite)
        for key in keys {
            try getFiles.setValue(value, forKey: key)
            try getSQLite.setValue(value, forKey: key)
        }
        let gets = try context.diskRounds.run(
            strata: { try getRate(getSQLite, "DiskCache (SQLite engine)") },
            baseline: { try getRate(getFiles, "DiskCache (file engine)") }
        )

        let setFiles = try DiskFixture.openCache(
            in: try context.makeDirectory("disk-sqlite-set-1m-files"), engine: .files)
        let setSQLite = try DiskFixture.openCache(
            in: try context.makeDirectory("disk-sqlite-set-1m-sqlite"), engine: .sqlite)
        let sets = try context.diskRounds.run(
            strata: { try setRate(setSQLite) },
            baseline: { try setRate(setFiles) }
        )
        return [
            ScenarioResult(
                name: "disk-sqlite-get-1m", unit: .megabytesPerSecond, strata: gets.strata, baseline: gets.baseline,
                target: target, notes: [note + "; page cache warm"]),
            ScenarioResult(
                name: "disk-sqlite-set-1m", unit: .megabytesPerSecond, strata: sets.strata, baseline: sets.baseline,
                target: target, notes: [note]),
        ]
    }
}

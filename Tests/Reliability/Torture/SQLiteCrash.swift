import CacheCore
import DiskCache
import Foundation
import StrataTestSupport

/// Scenario 1 on the SQLite engine: a writer of sets (new keys and replacements, small values and large
/// ones kept as files), removals, `removeAll()` and trims, killed with SIGKILL at a random moment, and
/// every fifth iteration a file-to-SQLite migration killed the same way. After every kill a checker (its
/// own process) finds no wrong value and no lost acknowledged write, the database passes
/// `PRAGMA integrity_check`, its stored totals equal the rows, every large-value file a row names is there
/// with its size, and after `verify()` no orphan large-value file is left.
///
/// The writer logs `B op key version` before and `A op key version` after each operation with unbuffered
/// `write(2)`, as in ``CrashConsistency``; the checker turns the log into what each key may hold.
enum SQLiteCrash {
    static func run(_ options: Options) throws -> Int32 {
        try Scenario.run("sqlite-crash", options, defaultKeys: 64) { scenario, generator in
            let (report, keyCount, work, store) = (scenario.report, scenario.keyCount, scenario.work, scenario.store)
            let iterations = try options.int("iterations", default: 200)
            let windowMicroseconds = try options.int("window-ms", default: 200) * 1000
            let migrationEvery = try options.int("migrate-every", default: 5)
            // A migration of a few dozen keys is over within tens of milliseconds of the child's start.
            let migrationWindowMicroseconds = try options.int("migrate-window-ms", default: 60) * 1000
            let state = work.appendingPathComponent("state.json")

            var totals = SQLiteCheckFigures()
            var crashes = 0
            var migrations = 0
            for iteration in 0..<iterations {
                let ack = work.appendingPathComponent("ack-\(iteration)")
                let migrating = migrationEvery > 0 && iteration % migrationEvery == migrationEvery - 1
                let target = migrating ? work.appendingPathComponent("migrated-\(iteration)") : store
                if migrating {
                    migrations += 1
                    try prepareFileStore(target, keyCount: keyCount, version: UInt64(iteration + 1), ack: ack)
                }
                let arguments =
                    migrating
                    ? ["sqlite-migrate-child", "--store", target.path]
                    : [
                        "sqlite-crash-writer", "--store", store.path, "--keys", "\(keyCount)", "--ack", ack.path,
                        "--base", "\(UInt64(iteration + 1) * 1_000_000)", "--seed", "\(generator.next() % 1_000_000)",
                    ]
                let delay = Int.random(
                    in: 0..<(migrating ? migrationWindowMicroseconds : windowMicroseconds), using: &generator)
                // A migration may finish inside the window; anything else must end by the kill.
                if let failure = try CrashRound.killWriter(
                    arguments, afterMicroseconds: delay, iteration: iteration, mayFinish: migrating)
                {
                    crashes += 1
                    report.fail(failure)
                }
                var checkArguments = [
                    "sqlite-crash-check", "--store", target.path, "--keys", "\(keyCount)", "--ack", ack.path,
                    "--state", migrating ? work.appendingPathComponent("state-\(iteration).json").path : state.path,
                ]
                if migrating { checkArguments += ["--migrating", "1"] }
                guard
                    let figures: SQLiteCheckFigures = try CrashRound.check(
                        checkArguments, iteration: iteration, timeout: 120, report: report)
                else {
                    crashes += 1
                    continue
                }
                totals.add(figures)
                if migrating { try? FileManager.default.removeItem(at: target) }
            }
            report.record("iterations", iterations)
            report.record("migrations_killed_or_finished", migrations)
            report.record("keys", keyCount)
            report.record("kill_window_ms", windowMicroseconds / 1000)
            report.record("migration_kill_window_ms", migrationWindowMicroseconds / 1000)
            for (name, value) in totals.counters.sorted(by: { $0.key < $1.key }) { report.record(name, value) }
            report.record("crashes", crashes)
            report.expect(totals.counters["wrong_values", default: 0] == 0, "wrong values")
            report.expect(totals.counters["keys_missing", default: 0] == 0, "acknowledged keys missing")
            report.expect(totals.counters["read_errors", default: 0] == 0, "read errors")
            report.expect(totals.counters["acknowledged_sets", default: 0] > 0, "the writer never completed a set")
            report.expect(totals.counters["large_values_read", default: 0] > 0, "no large value was ever read back")
        }
    }

    /// A file store holding every key at `version` (a quarter of them large), and the ack log saying so.
    private static func prepareFileStore(_ store: URL, keyCount: Int, version: UInt64, ack: URL) throws {
        let cache = try Store.open(store, engine: .files)
        var log = ""
        for index in 0..<keyCount {
            let key = Store.key(index)
            try cache.setValue(value(key: key, version: version), forKey: key, expiry: .never)
            log += "B set \(index) \(version)\nA set \(index) \(version)\n"
        }
        try Data(log.utf8).write(to: ack)
    }

    /// The value of `key` at `version`: about a quarter are larger than the row limit, so they live in files.
    static func value(key: String, version: UInt64) -> Data {
        // Mixed through SplitMix64 first: the low bits of the FNV-1a seed barely change with the version.
        var mixer = SplitMix64(seed: UInt64(Payload.length(key: key, version: version, maximum: .max - 1)))
        let large = mixer.next() % 4 == 0
        let length =
            large
            ? DiskCacheConfiguration.Engine.sqliteRowLimit + Payload.length(key: key, version: version, maximum: 65_536)
            : Payload.length(key: key, version: version, maximum: 8192)
        return Payload.make(key: key, version: version, length: length)
    }

    // MARK: - Children

    /// Sets, removes, clears and trims at random until killed; never returns normally.
    static func writer(_ options: Options) throws -> Int32 {
        var writer = try CrashWriter(options)
        let cache = try Store.open(try options.url("store"), engine: .sqlite)
        var version = writer.base
        while true {
            version += 1
            let index = Int.random(in: 0..<writer.keyCount, using: &writer.generator)
            let key = Store.key(index)
            let roll = Int.random(in: 0..<1000, using: &writer.generator)
            let operation = roll < 700 ? "set" : roll < 960 ? "rm" : roll < 980 ? "trim" : "clear"
            writer.log("B \(operation) \(index) \(version)\n")
            switch operation {
            case "set": try cache.setValue(value(key: key, version: version), forKey: key, expiry: .never)
            case "rm": try cache.removeEntry(forKey: key)
            case "trim": _ = try cache.trim(toCount: writer.keyCount / 2)
            default: try cache.removeAll()
            }
            writer.log("A \(operation) \(index) \(version)\n")
        }
    }

    /// Migrates the file store to SQLite (killed at some point by the parent).
    static func migrateChild(_ options: Options) throws -> Int32 {
        _ = try configuration(try options.url("store"), engine: .automatic).migrateStoreToSQLite()
        return 0
    }

    private static func configuration(_ store: URL, engine: DiskCacheConfiguration.Engine) -> DiskCacheConfiguration {
        DiskCacheConfiguration(
            name: "reliability", directory: store, masterKeySource: .masterKey(Store.masterKey), engine: engine)
    }
}

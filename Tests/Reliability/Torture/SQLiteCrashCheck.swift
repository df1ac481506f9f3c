import CacheCore
import DiskCache
import Foundation

/// The checker of ``SQLiteCrash``: replays the writer's log into what each key may hold, audits the
/// database, reads every key, resumes an interrupted migration, sweeps, and audits again.
enum SQLiteCrashCheck {
    /// What the acknowledged operations left: each key's version (absent: removed or never written), and
    /// the keys a completed trim may have evicted since they were last written.
    private struct Expectations: Codable {
        var values: [Int: UInt64] = [:]
        var evictable: Set<Int> = []
    }

    static func run(_ options: Options) throws -> Int32 {
        let keyCount = try options.int("keys", default: 64)
        let stateURL = try options.url("state")
        let store = try options.url("store")
        let migrating = try options.int("migrating", default: 0) == 1
        var expected = (try? JSONDecoder().decode(Expectations.self, from: Data(contentsOf: stateURL))) ?? .init()
        var figures = SQLiteCheckFigures()
        let pending = replay(try options.url("ack"), into: &expected, figures: &figures)

        audit(store, stage: "after the kill", sweptOrphans: false, figures: &figures)
        do {
            let cache = try Store.open(store, engine: migrating ? .automatic : .sqlite)
            let leftovers = Store.files(under: store.appendingPathComponent("tmp")).count
            figures.count("temp_files_after_open", leftovers)
            read(cache, keyCount: keyCount, pending: pending, expected: &expected, figures: &figures)
        }
        if migrating {
            // The kill may have left the folder a file store with a half-filled database beside it: resume.
            let moved = try DiskCacheConfiguration(
                name: "reliability", directory: store, masterKeySource: .masterKey(Store.masterKey), engine: .automatic
            ).migrateStoreToSQLite()
            figures.count(moved > 0 ? "migrations_interrupted_then_resumed" : "migrations_found_complete")
            audit(store, stage: "after the resumed migration", sweptOrphans: false, figures: &figures)
            let cache = try Store.open(store, engine: .sqlite)
            read(cache, keyCount: keyCount, pending: nil, expected: &expected, figures: &figures)
        }
        // The writer is dead, so every unnamed large-value file is an orphan now, whatever its age.
        SQLiteStoreAudit.ageLargeFiles(store, by: 3_600)
        do {
            let cache = try Store.open(store, engine: .sqlite)
            let verify = try cache.verify()
            let damage = verify.issues.filter(\.isDamage)
            figures.count("verify_damage_found", damage.count)
            for issue in damage { figures.problems.append("verify after the kill removed \(issue)") }
        }
        audit(store, stage: "after verify", sweptOrphans: true, figures: &figures)
        try JSONEncoder().encode(expected).write(to: stateURL)
        print(figures.line)
        return 0
    }

    /// Applies the log's acknowledged operations; returns the one in flight when the writer died.
    private static func replay(
        _ ack: URL, into expected: inout Expectations, figures: inout SQLiteCheckFigures
    ) -> (operation: String, index: Int, version: UInt64)? {
        var pending: (operation: String, index: Int, version: UInt64)?
        let log = String(decoding: (try? Data(contentsOf: ack)) ?? Data(), as: UTF8.self)
        for line in log.split(separator: "\n") {
            let parts = line.split(separator: " ").map(String.init)
            guard parts.count == 4, let index = Int(parts[2]), let version = UInt64(parts[3]) else { continue }
            guard parts[0] == "A" else {
                pending = (parts[1], index, version)
                continue
            }
            pending = nil
            figures.count("acknowledged_\(parts[1] == "rm" ? "removes" : parts[1] + "s")")
            switch parts[1] {
            case "set":
                expected.values[index] = version
                expected.evictable.remove(index)
            case "rm":
                expected.values[index] = nil
                expected.evictable.remove(index)
            case "trim": expected.evictable = Set(expected.values.keys)
            default: expected = Expectations()
            }
        }
        if let pending { figures.count("killed_during_\(pending.operation)") }
        return pending
    }

    /// Reads every key and sorts what it finds: right, in flight, trimmed, missing or wrong.
    private static func read(
        _ cache: DiskCache<String, Data>, keyCount: Int, pending: (operation: String, index: Int, version: UInt64)?,
        expected: inout Expectations, figures: inout SQLiteCheckFigures
    ) {
        for index in 0..<keyCount {
            let key = Store.key(index)
            figures.count("reads")
            let value: Data?
            do {
                value = try cache.value(forKey: key)
            } catch {
                figures.count("read_errors")
                figures.problems.append("\(key): read threw \(error)")
                continue
            }
            let want = expected.values[index]
            let touchesKey = pending.map { $0.operation == "trim" || $0.operation == "clear" || $0.index == index }
            guard let value else {
                if want == nil {
                    figures.count("keys_absent_as_expected")
                } else if expected.evictable.contains(index) {
                    figures.count("keys_evicted_by_trim")
                } else if touchesKey == true, pending?.operation != "set" {
                    figures.count("keys_removed_in_flight")
                } else {
                    figures.count("keys_missing")
                    figures.problems.append("\(key): acknowledged version \(want ?? 0) missing")
                    continue
                }
                expected.values[index] = nil
                expected.evictable.remove(index)
                continue
            }
            if value.count > DiskCacheConfiguration.Engine.sqliteRowLimit { figures.count("large_values_read") }
            switch Payload.verify(value, expectedKey: key) {
            case .invalid(let why):
                figures.count("wrong_values")
                figures.problems.append("\(key): wrong value: \(why)")
            case .valid(let version) where version == want:
                figures.count("keys_right")
            case .valid(let version)
            where pending?.operation == "set" && touchesKey == true && pending?.version == version:
                // The set committed but the writer was killed before logging it: the new value is right.
                figures.count("keys_right")
                figures.count("keys_right_in_flight_version")
                expected.values[index] = version
                expected.evictable.remove(index)
            case .valid(let version):
                figures.count("wrong_values")
                figures.problems.append(
                    "\(key): stale, removed or unknown version \(version), expected \(want.map(String.init) ?? "none")")
            }
        }
    }

    /// Audits the database beside the engine; with `sweptOrphans`, no unnamed large-value file may remain.
    private static func audit(_ store: URL, stage: String, sweptOrphans: Bool, figures: inout SQLiteCheckFigures) {
        do {
            guard let audit = try SQLiteStoreAudit.audit(store) else { return }
            figures.count("audits")
            if audit.emptyDatabase { figures.count("audits_of_a_database_without_schema") }
            if audit.rolledBackCreation { figures.count("audits_after_a_rolled_back_creation") }
            if audit.integrity == "ok" { figures.count("integrity_ok") }
            figures.count("large_files_seen", audit.largeFiles)
            if !sweptOrphans { figures.count("orphans_before_sweep", audit.orphanFiles) }
            var problems = audit.problems
            if sweptOrphans {
                figures.count("orphans_after_sweep", audit.orphanFiles)
                if audit.orphanFiles > 0 { problems.append("\(audit.orphanFiles) orphan large-value files") }
            }
            figures.count("audit_failures", problems.count)
            figures.problems += problems.map { "\(stage): \($0)" }
        } catch {
            figures.count("audit_failures")
            figures.problems.append("\(stage): audit failed: \(error)")
        }
    }
}

/// Named counters and problems of one SQLite checker run, sent to the parent as one JSON line.
struct SQLiteCheckFigures: Codable, CrashCheckFigures {
    var counters: [String: Int] = [:]
    var problems: [String] = []

    init() {}

    init?(output: String) {
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("sqlite-check ") }),
            let decoded = try? JSONDecoder().decode(Self.self, from: Data(line.dropFirst(13).utf8))
        else { return nil }
        self = decoded
    }

    var line: String { "sqlite-check " + String(decoding: (try? JSONEncoder().encode(self)) ?? Data(), as: UTF8.self) }

    mutating func count(_ name: String, _ amount: Int = 1) { counters[name, default: 0] += amount }

    mutating func add(_ other: Self) {
        for (name, value) in other.counters { counters[name, default: 0] += value }
    }
}

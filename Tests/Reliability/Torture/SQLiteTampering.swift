import CacheCore
import DiskCache
import Foundation
import StrataTestSupport

/// Scenario 2 on the SQLite engine: rows and large-value files edited behind the engine's back never yield
/// a wrong value. Each round edits a closed store with the system SQLite or the file system (a value blob's
/// byte, its expiry, its recorded size, its serial, two rows' values or names swapped, a row pointed at
/// another row's file, a large-value file flipped, truncated, deleted or swapped with another, garbage in
/// `-wal` or `-shm`), opens the store again and reads the damaged keys: each must read as its right value,
/// a miss or an error (counted), never another value. The damaged keys are then written again. At the end
/// `verify()` runs and the database is audited (integrity, totals, no orphan large-value file).
///
/// The row of each key is learnt by writing keys one at a time and watching which row appears, so the
/// harness needs no knowledge of how names are derived.
enum SQLiteTampering {
    enum Kind: String, CaseIterable {
        case valueByteFlip, valueTruncation, expiry, size, serial, swapValues, swapNames, foreignFileColumn
        case largeByteFlip, largeTruncation, largeDeletion, largeSwap, walGarbage, shmGarbage
    }

    static func run(_ options: Options) throws -> Int32 {
        try Scenario.run("sqlite-tampering", options, defaultKeys: 48, tamperAndRead)
    }

    /// The rounds of tampering and reads, on the scenario's store; failures go to its report.
    private static func tamperAndRead(_ scenario: Scenario, _ generator: inout SplitMix64) throws {
        let (report, keyCount, store) = (scenario.report, scenario.keyCount, scenario.store)
        let rounds = try scenario.options.int("tamperings", default: 1000)

        // Given: every key written once, and the row that holds it.
        var versions: [String: UInt64] = [:]
        var names: [String: String] = [:]
        do {
            let cache = try Store.open(store, engine: .sqlite)
            for index in 0..<keyCount {
                let key = Store.key(index)
                let before = try rowNames(store)
                try cache.setValue(SQLiteCrash.value(key: key, version: 1), forKey: key, expiry: .never)
                versions[key] = 1
                let added = try rowNames(store).subtracting(before)
                guard added.count == 1, let name = added.first else {
                    throw HarnessError("writing \(key) added rows \(added.sorted()); cannot tell its row")
                }
                names[key] = name
            }
        }
        let keys = (0..<keyCount).map(Store.key)
        var applied: [Kind: Int] = [:]
        var outcomes: [String: Int] = [:]
        var skipped = 0
        var round = 0
        while round < rounds && skipped < rounds {
            let kind = Kind.allCases.randomElement(using: &generator) ?? .valueByteFlip
            // File damage goes to keys whose value is in a file, row damage to keys whose value is in a row.
            let inFiles = try filedNames(store)
            let wantsFile: Bool? =
                [.largeByteFlip, .largeTruncation, .largeDeletion, .largeSwap].contains(kind)
                ? true : [.valueByteFlip, .valueTruncation].contains(kind) ? false : nil
            let candidates = keys.filter { key in wantsFile.map { inFiles.contains(names[key] ?? "") == $0 } ?? true }
            let first = candidates.randomElement(using: &generator) ?? keys[0]
            // A row pointed at another row's file needs a second key whose value is in a file.
            let seconds =
                kind == .foreignFileColumn ? keys.filter { inFiles.contains(names[$0] ?? "") } : candidates
            let second = seconds.filter { $0 != first }.randomElement(using: &generator) ?? keys[1]
            let damaged = try tamper(
                kind, first: first, second: second, names: names, store: store, generator: &generator)
            guard !damaged.isEmpty else {
                skipped += 1
                continue
            }
            applied[kind, default: 0] += 1
            defer { round += 1 }
            // Every tenth round reads every key: damage must not leak into a key that was not touched.
            let cache = try Store.open(store, engine: .sqlite)
            for key in round % 10 == 0 ? keys : damaged {
                let outcome = read(key, version: versions[key] ?? 0, from: cache)
                let touched = damaged.contains(key)
                outcomes["\(touched ? "damaged" : "untouched")_\(outcome)", default: 0] += 1
                if outcome == "wrong" { report.fail("round \(round) \(kind.rawValue): \(key) read a wrong value") }
                if !touched && outcome != "right" {
                    report.fail("round \(round) \(kind.rawValue): untouched \(key) read as \(outcome)")
                }
            }
            for key in damaged {
                let version = (versions[key] ?? 0) + 1
                try cache.setValue(SQLiteCrash.value(key: key, version: version), forKey: key, expiry: .never)
                versions[key] = version
            }
        }

        // Then: a sweep leaves a sound database, right totals, no orphan, and every key right.
        SQLiteStoreAudit.ageLargeFiles(store, by: 3_600)
        var finalWrong = 0
        do {
            let cache = try Store.open(store, engine: .sqlite)
            let verify = try cache.verify()
            report.record("final_verify_checked", verify.checked)
            report.record("final_verify_removed", verify.removed.count)
            for key in keys where read(key, version: versions[key] ?? 0, from: cache) != "right" { finalWrong += 1 }
        }
        let audit = try SQLiteStoreAudit.audit(store)
        report.record("tamperings", applied.values.reduce(0, +))
        report.record("tamperings_skipped_nothing_to_damage", skipped)
        for kind in Kind.allCases { report.record("kind.\(kind.rawValue)", applied[kind] ?? 0) }
        for (name, value) in outcomes.sorted(by: { $0.key < $1.key }) { report.record("reads.\(name)", value) }
        let wrong = (outcomes["damaged_wrong"] ?? 0) + (outcomes["untouched_wrong"] ?? 0)
        report.record("wrong_values", wrong)
        report.record("final_keys_not_right", finalWrong)
        report.record("final_integrity", audit?.integrity ?? "no database")
        report.record("final_orphan_files", audit?.orphanFiles ?? -1)
        report.expect(wrong == 0, "\(wrong) wrong values")
        report.expect(finalWrong == 0, "\(finalWrong) keys not right after the final verify")
        for problem in audit?.problems ?? ["no database at the end"] { report.fail("final audit: \(problem)") }
        report.expect(audit?.orphanFiles == 0, "orphan large-value files after the final verify")
    }

    /// Reads `key` and names the outcome: `right`, `miss`, `error` or `wrong`.
    private static func read(_ key: String, version: UInt64, from cache: DiskCache<String, Data>) -> String {
        do {
            guard let value = try cache.value(forKey: key) else { return "miss" }
            if case .valid(let found) = Payload.verify(value, expectedKey: key), found == version { return "right" }
            return "wrong"
        } catch {
            return "error"
        }
    }

    private static func filedNames(_ store: URL) throws -> Set<String> {
        let database = try SQLiteInspector(store: store)
        return Set(
            try database.query("SELECT name FROM entry WHERE file IS NOT NULL").compactMap { $0[0] }
                .map { String(decoding: $0, as: UTF8.self) })
    }

    private static func rowNames(_ store: URL) throws -> Set<String> {
        let database = try SQLiteInspector(store: store)
        return Set(
            try database.query("SELECT name FROM entry").compactMap { $0[0] }.map {
                String(decoding: $0, as: UTF8.self)
            })
    }

    /// Applies one damage to the closed store; returns the keys it touched (empty when it found nothing to
    /// damage, such as a file edit on two keys whose values are both in rows).
    private static func tamper(
        _ kind: Kind, first: String, second: String, names: [String: String], store: URL,
        generator: inout SplitMix64
    ) throws -> [String] {
        let database = try SQLiteInspector(store: store, writable: true)
        let a = names[first] ?? ""
        let b = names[second] ?? ""
        func cell(_ column: String, _ name: String) throws -> Data? {
            try database.query("SELECT \(column) FROM entry WHERE name = ?1", [name]).first?.first ?? nil
        }
        func text(_ column: String, _ name: String) throws -> String? {
            try cell(column, name).map { String(decoding: $0, as: UTF8.self) }
        }
        let large = store.appendingPathComponent("large")
        switch kind {
        case .valueByteFlip, .valueTruncation:
            guard var value = try cell("value", a), !value.isEmpty else { return [] }
            let offset = Int.random(in: 0..<value.count, using: &generator)
            if kind == .valueByteFlip {
                value[offset] ^= UInt8.random(in: 1...255, using: &generator)
            } else {
                value = value.prefix(offset)
            }
            try database.execute("UPDATE entry SET value = ?1 WHERE name = ?2", [value, a])
        case .expiry:
            let choices: [Any] = [
                Int64(0), Int64(-1), Int64.max, Int64(Date().timeIntervalSince1970 * 1000) - 1000,
                Int64(Date().timeIntervalSince1970 * 1000) + 86_400_000, NSNull(),
            ]
            try database.execute(
                "UPDATE entry SET removable = ?1 WHERE name = ?2", [choices.randomElement(using: &generator)!, a])
        case .size:
            let size = [Int64(0), Int64(-1), Int64(1 << 40), Int64.random(in: 0..<200_000, using: &generator)]
                .randomElement(using: &generator)!
            try database.execute("UPDATE entry SET size = ?1 WHERE name = ?2", [size, a])
        case .serial:
            try database.execute(
                "UPDATE entry SET serial = ?1 WHERE name = ?2", [Int64.random(in: .min ... .max, using: &generator), a])
        case .swapValues:
            try database.execute(
                """
                UPDATE entry SET (value, file, size) = (SELECT value, file, size FROM entry AS other
                    WHERE other.name = CASE entry.name WHEN ?1 THEN ?2 ELSE ?1 END)
                WHERE name IN (?1, ?2)
                """, [a, b])
            return [first, second]
        case .swapNames:
            try database.execute("UPDATE entry SET name = '#swap' WHERE name = ?1", [a])
            try database.execute("UPDATE entry SET name = ?1 WHERE name = ?2", [a, b])
            try database.execute("UPDATE entry SET name = ?1 WHERE name = '#swap'", [b])
            return [first, second]
        case .foreignFileColumn:
            guard let file = try text("file", b) else { return [] }
            try database.execute("UPDATE entry SET file = ?1, value = NULL WHERE name = ?2", [file, a])
            return [first, second]
        case .largeByteFlip, .largeTruncation, .largeDeletion:
            guard let file = try text("file", a) else { return [] }
            let path = large.appendingPathComponent(file)
            var bytes = try Data(contentsOf: path)
            guard !bytes.isEmpty else { return [] }
            let offset = Int.random(in: 0..<bytes.count, using: &generator)
            switch kind {
            case .largeByteFlip: bytes[offset] ^= UInt8.random(in: 1...255, using: &generator)
            case .largeTruncation: bytes = bytes.prefix(offset)
            default:
                try FileManager.default.removeItem(at: path)
                return [first]
            }
            try bytes.write(to: path)
        case .largeSwap:
            guard let fileA = try text("file", a), let fileB = try text("file", b) else { return [] }
            let pathA = large.appendingPathComponent(fileA)
            let pathB = large.appendingPathComponent(fileB)
            let bytesA = try Data(contentsOf: pathA)
            try Data(contentsOf: pathB).write(to: pathA)
            try bytesA.write(to: pathB)
            return [first, second]
        case .walGarbage, .shmGarbage:
            let suffix = kind == .walGarbage ? "-wal" : "-shm"
            // A closed store may keep committed frames in its -wal (the engine truncates it at close only from
            // 32 frames): garbage there would destroy rewrites of keys this round does not name. The garbage goes
            // into a checkpointed, empty -wal, as it did when the last connection's close checkpointed.
            if kind == .walGarbage { try database.execute("PRAGMA wal_checkpoint(TRUNCATE)") }
            let path = store.appendingPathComponent("store.sqlite" + suffix)
            var bytes = (try? Data(contentsOf: path)) ?? Data()
            let count = Int.random(in: 1...40_000, using: &generator)
            let garbage = Data((0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let offset = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &generator)
            bytes.replaceSubrange(offset..<min(bytes.count, offset + count), with: garbage)
            try bytes.write(to: path)
            return [first]
        }
        return [first]
    }
}

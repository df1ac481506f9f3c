import DiskCache
import Foundation

extension SeedCorpus {
    /// Small valid SQLite stores for the damaged-database target
    /// (`STRATA_FUZZ_TARGET=sqlite StrataFuzz --make-corpus Tests/Reliability/Corpus-SQLite`): empty, one key,
    /// every key, and every key with some removed again (free pages), each packed as ``fuzzSQLite(_:)`` reads it.
    static func writeSQLite(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let plans: [String: (written: Int, removed: Int)] = [
            "empty": (0, 0), "one": (1, 0), "all": (SQLiteFuzz.keyCount, 0), "removed": (SQLiteFuzz.keyCount, 5),
        ]
        for (name, plan) in plans.sorted(by: { $0.key < $1.key }) {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
                "strata-seed-\(name)-\(getpid())")
            try? FileManager.default.removeItem(at: folder)
            defer { try? FileManager.default.removeItem(at: folder) }
            do {
                // Closed at the end of this scope: the last connection's checkpoint leaves no -wal behind.
                let cache = try SQLiteFuzz.open(folder)
                for index in 0..<plan.written {
                    let key = SQLiteFuzz.key(index)
                    try cache.setValue(SQLiteFuzz.value(forKey: key), forKey: key)
                }
                for index in 0..<plan.removed { try cache.removeEntry(forKey: SQLiteFuzz.key(index)) }
            }
            let check = try Data(contentsOf: folder.appendingPathComponent("store.check"))
            let database = try Data(contentsOf: folder.appendingPathComponent("store.sqlite"))
            let walPath = folder.appendingPathComponent("store.sqlite-wal").path
            let walSize = (try? FileManager.default.attributesOfItem(atPath: walPath)[.size] as? Int) ?? 0
            guard walSize == 0 else { throw CocoaError(.fileWriteUnknown) }
            let seed = Data([UInt8(check.count >> 8), UInt8(check.count & 0xFF)]) + check + database
            try seed.write(to: directory.appendingPathComponent("sqlite-\(name)"))
        }
        print("wrote \(plans.count) SQLite seeds to \(directory.path)")
    }
}

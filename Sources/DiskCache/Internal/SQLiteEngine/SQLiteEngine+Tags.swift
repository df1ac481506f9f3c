import CacheCore
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Tag counters in the `tag` table: a row per tag, named and sealed as the file engine's counter files are
// (TagCounters.swift: the HMAC name of the tag's canonical bytes, and the 40-byte version with its MAC), so
// neither a tag's name nor an editable version reaches the database. The counter rule is FenceCounter's.
extension SQLiteEngine {
    func tagVersions(of tags: Set<String>) throws -> [String: UInt64] {
        var versions = try currentTagVersions(of: tags, damagedThrows: true)
        let missing = tags.filter { versions[$0] == nil }
        guard !missing.isEmpty else { return versions }
        try requireWritable("create a tag counter")
        try translatingErrors {
            // Stamping an entry about to be written: a store deleted from outside is made again for it.
            try write(recreating: true) { connection in
                for tag in missing {
                    let name = try tagCounters.fileName(of: tag)
                    // A counter another writer created first is the one to stamp with.
                    if let existing = try counter(name: name, on: connection) {
                        versions[tag] = existing
                        continue
                    }
                    let base = FenceCounter.freshBase()
                    try store(base, name: name, on: connection)
                    versions[tag] = base
                }
            }
        }
        return versions
    }

    func advanceTagVersion(of tag: String) throws {
        try requireWritable("remove a tag")
        try unlessGone(()) {
            let name = try tagCounters.fileName(of: tag)
            try write { connection in
                // A damaged counter is as good as missing: advanced to a fresh base, never read as a number.
                let current = try? counter(name: name, on: connection)
                try store(FenceCounter.advanced(from: current ?? nil), name: name, on: connection)
            }
        }
    }

    /// The current versions of those `tags` that have a counter; a tag without one, or with a damaged one
    /// (reported) unless `damagedThrows`, is left out (it matches no stamp).
    ///
    /// - Throws: `.corruptEntry` for a damaged counter with `damagedThrows`, or the database's failure.
    func currentTagVersions(of tags: some Sequence<String>, damagedThrows: Bool = false) throws -> [String: UInt64] {
        try unlessGone([:]) {
            try read { connection in
                var versions: [String: UInt64] = [:]
                for tag in tags {
                    do {
                        if let version = try counter(name: try tagCounters.fileName(of: tag), on: connection) {
                            versions[tag] = version
                        }
                    } catch let error as CacheError where error.code == .corruptEntry && !damagedThrows {
                    }
                }
                return versions
            }
        }
    }

    /// The counter `name` holds, `nil` when there is none.
    ///
    /// - Throws: `.corruptEntry` when the stored counter is not one this store's master key sealed for `name`.
    private func counter(name: String, on connection: SQLiteConnection) throws -> UInt64? {
        let sealed = try connection.withStatement("SELECT counter FROM tag WHERE name = ?1") { statement in
            try statement.bind(name, at: 1)
            return try statement.step() ? try statement.blob(at: 0) ?? [] : nil
        }
        guard let sealed else { return nil }
        guard let version = try tagCounters.open(Data(sealed), name: name) else {
            let error = CacheError(
                .corruptEntry, "store '\(storeName)': a tag counter in the database is damaged", path: databasePath)
            report(
                .corruptEntryKept, "a tag's version counter is damaged; its entries are misses", path: nil,
                error: error)
            throw error
        }
        return version
    }

    private func store(_ version: UInt64, name: String, on connection: SQLiteConnection) throws {
        let sealed = try tagCounters.seal(version, name: name)
        try connection.withStatement("INSERT OR REPLACE INTO tag(name, counter) VALUES (?1, ?2)") { statement in
            try statement.bind(name, at: 1)
            try statement.bind(Array(sealed), at: 2)
            _ = try statement.step()
        }
    }
}

import CacheCore
import CacheCrypto
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Moving a file store to the SQLite engine, in place (Docs/DiskCache.md, "Migrating a file store"). The
// database fills beside the files while the folder is still a file store; writing `store.check` version 2
// over version 1 (one rename) is the commit; the file engine's leftovers are deleted after it. A kill at any
// moment leaves either the file store, whole, or the SQLite store, whole.
extension SQLiteEngine {
    /// What the file engine leaves behind in a migrated folder, deleted once the version 2 record is in place.
    static let migrationLeftovers = [
        StoreLayout.entriesName, TagCounters.folderName, StoreLayout.statisticsName, StoreLayout.storeLockName,
        migrationLockName,
    ]

    /// The lock file that keeps two migrations of one store apart.
    static let migrationLockName = "migrate.lock"

    /// Copies every live entry of `files` into this engine, re-sealed under this store's binding and epoch and
    /// re-stamped with this store's tag counters, then removes rows no live entry matches (left by an
    /// earlier, interrupted run). An entry already copied unchanged by an earlier run is not written again, so
    /// a migration interrupted at any point resumes where it stopped.
    ///
    /// - Parameter progress: Called with (entries done, entries found) as the file store is read.
    /// - Returns: How many entries the SQLite store holds afterwards.
    func copyEntries(from files: FileEngine, progress: ((Int, Int) -> Void)?) throws -> Int {
        try translatingErrors {
            try write { connection in
                try connection.execute("CREATE TEMP TABLE IF NOT EXISTS migrated(name TEXT PRIMARY KEY)")
                try connection.execute("DELETE FROM migrated")
            }
        }
        var failure: (any Error)?
        _ = try files.verify(progress: progress) { record, _ in
            guard failure == nil else { return }
            do {
                try copy(record)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        return try translatingErrors {
            let stale = try write { connection -> [SQLiteEntryRow] in
                try connection.withStatement(
                    """
                    SELECT serial, removable, accessed, size, file, name FROM entry
                    WHERE name NOT IN (SELECT name FROM migrated)
                    """
                ) { statement in
                    var rows: [SQLiteEntryRow] = []
                    while try statement.step() { rows.append(try Self.metadataRow(from: statement)) }
                    return rows
                }
            }
            try removeRows(stale)
            try repairTotals()
            return totals().count
        }
    }

    /// Writes one file-engine record here, unless an earlier run already did; marks it migrated.
    private func copy(_ record: EntryRecord) throws {
        var value = record.valueBytes
        var tags: [String: UInt64] = [:]
        if record.header.hasTags, let (stamped, plain) = TagBlock.decode(record.valueBytes) {
            tags = try tagVersions(of: Set(stamped.keys))
            value = try TagBlock.encode(tags) + plain
        }
        let name = try translatingErrors { try namer.hexName(of: record.keyBytes) }
        let existing = try read(keyBytes: record.keyBytes, includingStale: true)
        let header = record.header
        let unchanged =
            existing.map {
                $0.header.expiresAt == header.expiresAt && $0.header.staleUntil == header.storedStaleUntil
                    && $0.header.cost == header.cost && $0.header.hasTags == header.hasTags
                    && $0.valueBytes == (header.hasTags ? TagBlock.decode(value)?.value : value)
                    && (tags.isEmpty || $0.tags == Set(tags.keys))
            } ?? false
        if !unchanged {
            try write(
                keyBytes: record.keyBytes, valueBytes: value, expiresAt: header.expiresAt, cost: header.cost,
                staleUntil: header.storedStaleUntil, hasTags: header.hasTags)
        }
        try translatingErrors {
            try write { connection in
                try connection.withStatement("INSERT OR IGNORE INTO migrated(name) VALUES (?1)") {
                    try $0.bind(name, at: 1)
                    _ = try $0.step()
                }
            }
        }
    }

    /// Makes the folder a SQLite store: `store.check` version 2, sealed under the same master key, renamed
    /// over version 1.
    func commitMigration() throws {
        try translatingErrors {
            let record = try KeyCheckRecord.make(
                salt: try CryptoBackend.randomBytes(count: KeyCheckRecord.saltSize), master: master,
                version: KeyCheckRecord.sqliteVersion)
            try files.write(
                in: folders.root, name: StoreLayout.checkRecordName, temporaryFolder: folders.temporary,
                modified: nil, replacing: true, placing: { try $0() }, clearingDirectory: { _, _ in false },
                fill: { fd, path in try record.withUnsafeBytes { try FileSystem.writeAll(fd, $0, path: path) } })
            try folders.root.sync()
        }
        // The copy's own reads and writes are not the store's traffic.
        state.withLock { $0.pending = StatisticsCounters() }
        removeMigrationLeftovers()
    }

    /// Deletes what the file engine left in a migrated folder (its entry files, tag counters, statistics and
    /// lock file); links among them are removed as links, never followed.
    func removeMigrationLeftovers() {
        for name in Self.migrationLeftovers {
            guard (try? folders.root.status(name)) ?? nil != nil else { continue }
            try? FileManager.default.removeItem(atPath: layout.root + "/" + name)
        }
    }
}

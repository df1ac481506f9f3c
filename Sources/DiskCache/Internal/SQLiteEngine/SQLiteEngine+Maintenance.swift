import CacheCore
import CacheCrypto
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

// Wipes, listings, sweeps and trims: each reads rows in bounded batches and removes them in bounded write
// transactions, so another process's write waits at most one batch.
extension SQLiteEngine {
    // MARK: - Wipe

    func removeAll() throws {
        try removeAll { _, _ in }
    }

    /// Starts a new key epoch in one commit (every earlier row is unreadable from then on), then deletes the
    /// rows in batches and their files after each batch commits.
    ///
    /// On a full volume SQLite can commit nothing, not even a deletion (its WAL cannot grow, and a checkpoint
    /// would grow the database): the database is then replaced (``replaceDatabase(because:)``).
    func removeAll(progress: (_ done: Int, _ total: Int) -> Void) throws {
        try requireWritable("remove all entries")
        try unlessGone(()) {
            let total = Int(try read { try totals(on: $0) }.count)
            var done = 0
            progress(0, total)
            do {
                try startNewEpoch()
                try deleteAllRows(total: total, done: &done, progress: progress)
            } catch let error as SQLiteError where error.kind == .full {
                try replaceDatabase(because: error)
                progress(max(total, done), max(total, done))
                return
            }
            // The deletions filled the WAL with pages nobody needs: give the space back now. A reader of
            // another process may keep it from completing; the next automatic checkpoint then does it.
            _ = try? writer.withLock { try $0?.checkpoint(.truncate) }
        }
    }

    /// The wipe of a full volume: the large-value files and the database with its `-wal` and `-shm` are
    /// unlinked (their space is freed once no process holds them open) and an empty database with a fresh
    /// epoch made in their place. Other instances follow it at their next write, or at their next read a
    /// second on (SQLiteEngine+Following.swift); the stored statistics and tag counters start again (no entry
    /// is left for a counter to fence).
    ///
    /// - Throws: `SQLiteError` `.full` when even then the new database does not fit (another process still
    ///   holds the old one open): every entry is gone, and the next write makes the store again.
    private func replaceDatabase(because error: SQLiteError) throws {
        try events.holding {
            try writer.withLock { connection in
                detachConnections(&connection)
                var large: [String] = []
                try? folders.large.forEach { name, _ in large.append(name) }
                for name in large { unlinkLargeFile(name, of: nil) }
                let (opened, identity) = try openReplacement()
                connection = opened
                state.withLock {
                    $0.database = identity
                    $0.databaseCheckedAt = clock.now
                }
                try adoptEpoch(onOpened: opened)
            }
        }
        report(
            .maintenanceFailed,
            "the volume is full, so SQLite could not commit the wipe; the database was deleted and made again, empty, "
                + "with a new key epoch (its statistics start again)", path: databasePath, error: error)
    }

    /// Unlinks the database, its `-wal` and `-shm`, and opens a new one with a fresh epoch in their place.
    ///
    /// A full volume frees the old files' space only once no process holds them open, and a child this process
    /// is starting holds a copy of every descriptor until it closes them or `exec`s — any thread's spawn, at
    /// any moment. So a new database that does not fit is unlinked in turn and tried again, a few times, a
    /// moment apart (seen: the full-volume wipe test failing only while other tests started processes).
    private func openReplacement() throws -> (SQLiteConnection, FileStatus?) {
        var attempt = 0
        while true {
            for suffix in ["", "-wal", "-shm"] { try? folders.root.unlink(Self.databaseName + suffix) }
            do {
                return try openWriter(salt: try CryptoBackend.randomBytes(count: KeyCheckRecord.saltSize))
            } catch let error as SQLiteError where error.kind == .full && attempt < Self.replacementAttempts - 1 {
                attempt += 1
                usleep(Self.replacementPause)
            }
        }
    }

    /// How many times a full-volume wipe tries to make the new database, and the pause between tries (µs).
    private static let replacementAttempts = 4
    private static let replacementPause: useconds_t = 50_000

    /// Writes a fresh epoch salt and adopts it; drops the buffered accesses, which name rows of the old one.
    private func startNewEpoch() throws {
        try write { connection in
            try Self.storeEpochSalt(try CryptoBackend.randomBytes(count: KeyCheckRecord.saltSize), on: connection)
            try adoptEpoch(from: connection)
        }
        state.withLock { $0.recency = RecencyBuffer() }
    }

    /// Deletes every row, a batch per transaction, unlinking each batch's files after it commits.
    ///
    /// The cursor only moves forward and the totals move by the rows SQLite actually deleted: in a damaged
    /// b-tree (rowids out of order) the scan can return a row that `DELETE ... WHERE id = ?1` cannot find, and
    /// a scan from the start would then return that row, undeleted, forever.
    private func deleteAllRows(total: Int, done: inout Int, progress: (Int, Int) -> Void) throws {
        var after: Int64 = .min
        while true {
            let (highest, deleted, files) = try write { connection -> (Int64?, Int, [(String, String)]) in
                var files: [(String, String)] = []
                var rows: [(id: Int64, size: Int)] = []
                let page = "SELECT id, size, file, name FROM entry WHERE id > ?1 ORDER BY id LIMIT ?2"
                try connection.withStatement(page) { statement in
                    try statement.bind(after, at: 1)
                    try statement.bind(Int64(Self.batchSize), at: 2)
                    while try statement.step() {
                        let id = statement.int64(at: 0)
                        guard id > after else { continue }
                        rows.append((id, Int(truncatingIfNeeded: statement.int64(at: 1))))
                        // A row that stays (undeletable) is of the old epoch, unreadable: its file goes too.
                        if let file = try statement.text(at: 2) {
                            files.append((file, try statement.text(at: 3) ?? ""))
                        }
                    }
                }
                var deleted = 0
                var bytes = 0
                for row in rows {
                    try connection.withStatement("DELETE FROM entry WHERE id = ?1") {
                        try $0.bind(row.id, at: 1)
                        _ = try $0.step()
                    }
                    if connection.changes > 0 {
                        deleted += 1
                        bytes &+= row.size
                    }
                }
                try moveTotals(count: -deleted, bytes: 0 &- bytes, on: connection)
                return (rows.map(\.id).max(), deleted, files)
            }
            for (file, row) in files { unlinkLargeFile(file, of: row) }
            guard let highest else { return }
            after = highest
            for _ in 0..<deleted {
                done += 1
                progress(done, max(total, done))
            }
        }
    }

    // MARK: - Listing

    /// Pages through the rows in `id` order, `batchSize` at a time, calling `body` with each (its sealed
    /// record read, from the row or its file).
    func forEachRow(_ body: (inout SQLiteEntryRow) throws -> Void) throws {
        var after: Int64 = .min
        while true {
            let page = try read { connection in
                try connection.withStatement(
                    """
                    SELECT serial, removable, accessed, size, file, id, name, value FROM entry
                    WHERE id > ?1 ORDER BY id LIMIT ?2
                    """
                ) { statement -> [(Int64, SQLiteEntryRow)] in
                    try statement.bind(after, at: 1)
                    try statement.bind(Int64(Self.batchSize), at: 2)
                    var rows: [(Int64, SQLiteEntryRow)] = []
                    while try statement.step() {
                        let name = try statement.text(at: 6) ?? ""
                        rows.append((statement.int64(at: 5), try Self.row(name: name, from: statement, valueColumn: 7)))
                    }
                    return rows
                }
            }
            // Only rows past the cursor, and the cursor only forward: in a damaged b-tree (rowids out of order)
            // `id > ?1 ORDER BY id` can return rows at or before the cursor, and following the last row's id
            // back would page through the same rows forever.
            let fresh = page.filter { $0.0 > after }
            guard let highest = fresh.map(\.0).max() else { return }
            after = highest
            for (_, row) in fresh {
                var row = row
                if row.file != nil { try readLargeFile(&row) }
                try body(&row)
            }
        }
    }

    func verify(
        progress: ((Int, Int) -> Void)?, visit: (EntryRecord, StoredEntryFacts) -> Void
    ) throws -> DiskCacheVerifyReport {
        try unlessGone(DiskCacheVerifyReport(checked: 0, removed: [])) {
            let (report, _) = try withoutActuallyEscaping(visit) { try sweep(progress: progress, visit: $0) }
            if !isReadOnly {
                try repairTotals()
                sweepOrphanFiles()
            }
            return report
        }
    }

    func removeExpired() throws -> Int {
        // A store opened read-only removes nothing, as its reads and verify() do: 0, not an error.
        try unlessGone(0) { try sweep(progress: nil, visit: nil).expiredOrFenced }
    }

    /// Judges every row (SQLiteEngine+Verdict.swift), removes the expired, tag-fenced and corrupt ones if
    /// unchanged, and visits the others (a row whose tag counter is damaged is kept and visited, as the file
    /// engine does).
    ///
    /// - Returns: The report, and how many expired and tag-fenced rows were removed.
    private func sweep(
        progress: ((Int, Int) -> Void)?, visit: ((EntryRecord, StoredEntryFacts) -> Void)?
    ) throws -> (report: DiskCacheVerifyReport, expiredOrFenced: Int) {
        try flushRecency()
        // Another process's wipe is seen before the first row is judged.
        _ = try read { try adoptEpoch(from: $0) }
        let total = totals().count
        var checked = 0
        var issues: [DiskCacheVerifyReport.Issue] = []
        var dead: [(SQLiteEntryRow, issue: String, expired: Bool)] = []
        var corrupt: [(SQLiteEntryRow, CorruptionReason)] = []
        try forEachRow { row in
            progress?(checked, max(total, checked))
            checked += 1
            let facts = StoredEntryFacts(
                size: row.size, lastAccess: Date(timeIntervalSince1970: TimeInterval(row.accessed) / 1_000))
            switch try judge(&row, keyBytes: nil) {
            case .live(let record), .servableStale(let record), .tagsUnknown(let record):
                visit?(record, facts)
            case .expired:
                dead.append((row, DiskCacheVerifyReport.Issue.expiredReason, true))
            case .fencedByTag:
                dead.append((row, DiskCacheVerifyReport.Issue.tagRemovedReason, false))
            case .corrupt(let reason):
                corrupt.append((row, reason))
            }
        }
        progress?(checked, checked)
        var removedDead = 0
        if !isReadOnly {
            for (row, reason) in corrupt {
                removeCorrupt(row, reason: reason)
                issues.append(.init(path: reportedPath(of: row), reason: reason.rawValue))
            }
            for (row, issue, expired) in dead where try removeRows([row]) == 1 {
                removedDead += 1
                if expired { count { $0.expirations += 1 } }
                issues.append(.init(path: reportedPath(of: row), reason: issue))
            }
        }
        return (DiskCacheVerifyReport(checked: checked, removed: issues.map(\.path), issues: issues), removedDead)
    }

    /// How a row is named in reports: the database's path and the row's name.
    func reportedPath(of row: SQLiteEntryRow) -> String {
        databasePath + "#" + row.name
    }

    /// Sets the stored totals to what the rows hold, reporting any drift it repairs.
    func repairTotals() throws {
        let drift = try write { connection -> (stored: (Int64, Int64), actual: (Int64, Int64))? in
            let stored = try totals(on: connection)
            let actual = try connection.withStatement("SELECT count(*), coalesce(sum(size), 0) FROM entry") {
                _ = try $0.step()
                return ($0.int64(at: 0), $0.int64(at: 1))
            }
            guard stored != actual else { return nil }
            try connection.withStatement("UPDATE totals SET count = ?1, bytes = ?2 WHERE id = 1") {
                try $0.bind(actual.0, at: 1)
                try $0.bind(actual.1, at: 2)
                _ = try $0.step()
            }
            return (stored, actual)
        }
        if let drift {
            report(
                .maintenanceFailed,
                "the stored totals (\(drift.stored.0) entries, \(drift.stored.1) bytes) differed from the rows "
                    + "(\(drift.actual.0), \(drift.actual.1)); they were repaired", path: databasePath, error: nil)
        }
    }

    /// Deletes large-value files that no row names and that are older than ``orphanAge``.
    func sweepOrphanFiles() {
        var candidates: [String] = []
        let cutoff = Date().addingTimeInterval(-Self.orphanAge)
        try? folders.large.forEach { name, status in
            if Self.isLargeFileName(name), status.isRegularFile, status.modificationDate < cutoff {
                candidates.append(name)
            }
        }
        for name in candidates {
            let named = try? read { connection in
                try connection.withStatement("SELECT 1 FROM entry WHERE file = ?1") {
                    try $0.bind(name, at: 1)
                    return try $0.step()
                }
            }
            if named == false { unlinkLargeFile(name, of: nil) }
        }
    }

    // MARK: - Sweeps and trims

    /// A row without its record, from columns serial, removable, accessed, size, file, name.
    static func metadataRow(from statement: SQLiteStatement) throws -> SQLiteEntryRow {
        SQLiteEntryRow(
            name: try statement.text(at: 5) ?? "", serial: statement.int64(at: 0),
            removable: statement.isNull(at: 1) ? nil : statement.int64(at: 1), accessed: statement.int64(at: 2),
            size: Int(clamping: max(0, statement.int64(at: 3))), file: try statement.text(at: 4))
    }

    func trim(toBytes bytes: Int?, toCount count: Int?) throws -> Int {
        try trim(toBytes: bytes, toCount: count, sparing: nil)
    }

    func applyLimits() throws {
        try enforceLimits(sparing: nil)
    }

    /// Trims to the low-water marks when a limit is exceeded, never removing `spared`.
    func enforceLimits(sparing spared: String?) throws {
        // Without limits there is nothing to compare: no read of the totals (a read transaction) per write.
        guard configuration.byteLimit != nil || configuration.countLimit != nil else { return }
        let (count, bytes) = totals()
        let overBytes = configuration.byteLimit.map { bytes > $0 } ?? false
        let overCount = configuration.countLimit.map { count > $0 } ?? false
        guard overBytes || overCount else { return }
        _ = try trim(
            toBytes: configuration.byteLimit.map(lowWater), toCount: configuration.countLimit.map(lowWater),
            sparing: spared)
    }

    /// Whether a trim's excess is what one write past the limits leaves over the low-water marks: at most the
    /// gap between each limit and its low-water mark, plus the entry just written (`spared`).
    private func isRoutine(excessBytes: Int, excessCount: Int, _ spared: String?) throws -> Bool {
        let gap = { (limit: Int?) in limit.map { $0 - self.lowWater($0) } ?? 0 }
        var sparedSize: Int64 = 0
        if let spared {
            sparedSize = try read { connection in
                try connection.withStatement("SELECT size FROM entry WHERE name = ?1") {
                    try $0.bind(spared, at: 1)
                    return try $0.step() ? max(0, $0.int64(at: 0)) : 0
                }
            }
        }
        let (byteAllowance, overflow) = gap(configuration.byteLimit).addingReportingOverflow(Int(clamping: sparedSize))
        return (overflow || excessBytes <= byteAllowance)
            && excessCount <= gap(configuration.countLimit) + (spared == nil ? 0 : 1)
    }

    /// Removes least recently used rows (oldest access first, then name) until within `bytes` and `count`,
    /// never `spared`, writing the recency buffer first so the order includes recent hits.
    private func trim(toBytes bytes: Int?, toCount count: Int?, sparing spared: String?) throws -> Int {
        try requireWritable("trim")
        return try unlessGone(0) {
            try flushRecency()
            var removed = 0
            var totalsRecounted = false
            while true {
                let (held, total) = totals()
                let excessBytes = bytes.map { total - $0 } ?? 0
                let excessCount = count.map { held - $0 } ?? 0
                guard excessBytes > 0 || excessCount > 0 else { break }
                // Totals edited upwards from outside would have this trim evict every entry: before evicting
                // more than one write past the limit can call for, count what the rows hold (once).
                if !totalsRecounted, try !isRoutine(excessBytes: excessBytes, excessCount: excessCount, spared) {
                    totalsRecounted = true
                    try repairTotals()
                    continue
                }
                let rows = try read { connection in
                    try connection.withStatement(
                        """
                        SELECT serial, removable, accessed, size, file, name FROM entry
                        WHERE name != ?1 ORDER BY accessed, name LIMIT ?2
                        """
                    ) { statement -> [SQLiteEntryRow] in
                        try statement.bind(spared ?? "", at: 1)
                        try statement.bind(Int64(Self.batchSize), at: 2)
                        var rows: [SQLiteEntryRow] = []
                        var freedBytes = 0
                        while try statement.step() {
                            let row = try Self.metadataRow(from: statement)
                            rows.append(row)
                            freedBytes &+= row.size
                            if freedBytes >= excessBytes && rows.count >= excessCount { break }
                        }
                        return rows
                    }
                }
                guard !rows.isEmpty else { break }
                let gone = try removeRows(rows)
                removed += gone
                self.count { $0.evictions += gone }
                if gone == 0 { break }
            }
            return removed
        }
    }
}

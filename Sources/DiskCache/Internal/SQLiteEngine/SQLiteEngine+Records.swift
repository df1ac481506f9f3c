import CacheCore
import CacheCrypto
import SealedRecord

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A row of `entry` as a read finds it, before its record is opened.
struct SQLiteEntryRow {
    var name: String
    var serial: Int64
    var removable: Int64?
    var accessed: Int64
    var size: Int
    /// The large-value file's name, or `nil` when the sealed record is in the row.
    var file: String?
    /// The sealed record (read from the row, or from the file), and how many bytes of it were read.
    var sealed: UninitializedBytes?
    var sealedCount = 0
    /// The key epoch the row was read under (in the same snapshot), then the one its record was opened under;
    /// `nil` until known.
    var epoch: Epoch?

    var binding: RecordBinding { .storeRow(name: name, file: file) }
}

extension SQLiteEngine {
    // MARK: - Read

    func read(keyBytes: Data, includingStale: Bool) throws -> EntryRecord? {
        try translatingErrors {
            let name = try namer.hexName(of: keyBytes)
            let found: SQLiteEntryRow?
            do {
                found = try findRow(name: name)
            } catch is SQLiteDatabaseGone {
                found = nil
            }
            guard var row = found else {
                count { $0.misses += 1 }
                return nil
            }
            switch try judge(&row, keyBytes: keyBytes) {
            case .live(let record):
                noteHit(of: row)
                return Self.stripped(record)
            case .servableStale(let record):
                if includingStale { return Self.stripped(record) }
            case .expired:
                let removed = (try? removeRows([row])) ?? 0
                count { $0.expirations += removed }
            case .fencedByTag:
                _ = try? removeRows([row])
            case .corrupt(let reason):
                removeCorrupt(row, reason: reason)
            case .tagsUnknown:
                break
            }
            count { $0.misses += 1 }
            return nil
        }
    }

    /// The row named `name` with its sealed record (from the row, or read from its file), or `nil`.
    func findRow(name: String) throws -> SQLiteEntryRow? {
        var row = try read { connection in
            try connection.withStatement(
                "SELECT serial, removable, accessed, size, file, value FROM entry WHERE name = ?1"
            ) { statement -> SQLiteEntryRow? in
                try statement.bind(name, at: 1)
                guard try statement.step() else { return nil }
                // The epoch is read in the row's snapshot (the statement is still stepping, so its read
                // transaction is open): another process's wipe is seen at once, not only when a record names
                // another epoch.
                let epoch = try epochInSnapshot(on: connection)
                var row = try Self.row(name: name, from: statement, valueColumn: 5)
                row.epoch = epoch
                return row
            }
        }
        if row?.file != nil { try readLargeFile(&row!) }
        return row
    }

    /// The key epoch in the snapshot of the read transaction open on `connection` (a statement of it is
    /// stepping). The epoch row is read only when the database changed since this connection last read it:
    /// the data version of an unchanged file is unchanged (``SQLiteConnection/dataVersion``), so a run of
    /// reads with no commit in between searches `meta` once, not once per read (Docs/Performance.md, "The
    /// SQLite engine's read path, third pass").
    func epochInSnapshot(on connection: SQLiteConnection) throws -> Epoch {
        let version = connection.dataVersion
        if let version, let remembered = connection.remembered, remembered.dataVersion == version {
            return try remembered.bytes.withUnsafeBytes { try adoptEpoch(matching: $0) }
        }
        // Joins the open read transaction: the same snapshot as the row. A missing row reads as no bytes,
        // which adoptEpoch takes for the damaged epoch, as before.
        let salt = try connection.withStatement("SELECT value FROM meta WHERE name = 'epoch'") { statement in
            try statement.step() ? try statement.withBlob(at: 0) { Data($0) } : Data()
        }
        connection.remembered = version.map { ($0, salt) }
        return try salt.withUnsafeBytes { try adoptEpoch(matching: $0) }
    }

    /// A row from a statement whose columns are serial, removable, accessed, size, file, then the value at
    /// `valueColumn`.
    static func row(name: String, from statement: SQLiteStatement, valueColumn: Int) throws -> SQLiteEntryRow {
        var row = SQLiteEntryRow(
            name: name, serial: statement.int64(at: 0),
            removable: statement.isNull(at: 1) ? nil : statement.int64(at: 1), accessed: statement.int64(at: 2),
            // A size edited below 0 is kept at 0: the row is then corrupt (its record is longer) and the sums
            // that follow cannot overflow.
            size: Int(clamping: max(0, statement.int64(at: 3))), file: try statement.text(at: 4))
        if row.file == nil {
            try statement.withBlob(at: valueColumn) { blob in
                let bytes = UninitializedBytes(count: blob.count)
                if blob.count > 0 { bytes.buffer.copyMemory(from: blob) }
                row.sealed = bytes
                row.sealedCount = blob.count
            }
        }
        return row
    }

    /// Opens the sealed record of `row` under the epoch in use, refreshing the epoch from the database once
    /// when the record names another (another process may have wiped the store since).
    ///
    /// - Returns: The record, or why the row is corrupt: a missing sealed record, a size or a `removable`
    ///   column that does not match the record, or what the kernel's checks find.
    func open(_ row: inout SQLiteEntryRow) throws -> Result<EntryRecord, CorruptionReason> {
        guard let sealed = row.sealed else { return .failure(row.file == nil ? .truncated : .valueFileUnusable) }
        guard row.sealedCount == row.size else { return .failure(.lengthMismatch) }
        var epoch = row.epoch ?? currentEpoch
        var outcome = try EntryRecord.open(
            sealed, count: row.sealedCount, binding: row.binding, epochID: epoch.id, key: epoch.sealingSubkey)
        if case .failure(.oldEpoch) = outcome {
            let fresh = try read { try adoptEpoch(from: $0) }
            if fresh.id != epoch.id {
                epoch = fresh
                outcome = try EntryRecord.open(
                    sealed, count: row.sealedCount, binding: row.binding, epochID: epoch.id, key: epoch.sealingSubkey)
            }
        }
        // The bytes now belong to the record (or were zeroed): they are never opened twice.
        row.sealed = nil
        row.epoch = epoch
        if case .success(let record) = outcome,
            Self.removable(expiresAt: record.header.expiresAt, staleUntil: record.header.staleUntil) != row.removable
        {
            return .failure(.badHeader)
        }
        return outcome
    }

    /// The `removable` column for a record: its stale window's end, else its expiry, in ms since 1970.
    static func removable(expiresAt: Date?, staleUntil: Date?) -> Int64? {
        (staleUntil ?? expiresAt).map(milliseconds)
    }

    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1_000).rounded(.down)
        guard value.isFinite else { return 0 }
        return Int64(Swift.max(Swift.min(value, 9e18), -9e18))
    }

    /// Removes a row found corrupt (if unchanged), counts and reports it.
    func removeCorrupt(_ row: SQLiteEntryRow, reason: CorruptionReason) {
        let removed = (try? removeRows([row])) ?? 0
        count { $0.corruptEntriesRemoved += removed }
        report(
            .corruptEntryRemoved, "removed a corrupt entry (\(reason))",
            path: reportedPath(of: row), error: nil)
    }

    /// Counts a hit and notes its access for the next recency write when the stored access is a resolution
    /// old, under one acquisition of the state's lock.
    func noteHit(of row: SQLiteEntryRow) {
        let now = Self.milliseconds(clock.now)
        // An access time edited to an extreme is simply rewritten: no arithmetic on it may trap.
        let (age, overflow) = now.subtractingReportingOverflow(row.accessed)
        let isNews = overflow || age >= Self.recencyResolution || age < 0
        state.withLock {
            $0.pending.hits += 1
            if isNews { $0.recency.note(row.name, at: now) }
        }
    }

    // MARK: - Write

    func write(
        keyBytes: Data, valueBytes: Data, expiresAt: Date?, cost: Int?, staleUntil: Date?, hasTags: Bool
    ) throws {
        try requireWritable("store an entry")
        let now = clock.now
        if let expiresAt, now >= expiresAt { return try remove(keyBytes: keyBytes) }
        if configuration.byteLimit == 0 || configuration.countLimit == 0 {
            try remove(keyBytes: keyBytes)
            return try applyLimits()
        }
        let size = EntryRecord.overhead + keyBytes.count + valueBytes.count
        // One rule with the file engine: no larger than the byte limit, nor than the format allows.
        let largest = min(configuration.byteLimit ?? .max, DiskCacheConfiguration.largestEntrySize)
        if size > largest {
            try remove(keyBytes: keyBytes)
            throw CacheError(
                .entryTooLarge,
                "entry of \(size) bytes on disk exceeds the store's limit of \(largest) bytes; it was not stored "
                    + "and the earlier entry for its key was removed", path: databasePath)
        }
        let name = try translatingErrors { try namer.hexName(of: keyBytes) }
        func header(_ epoch: Epoch) -> EntryRecord.Header {
            EntryRecord.Header(
                epochID: epoch.id, createdAt: now, expiresAt: expiresAt, cost: cost, keyLength: keyBytes.count,
                valueLength: valueBytes.count, staleUntil: staleUntil, hasTags: hasTags)
        }
        // The stale window as the header will hold it (whole seconds or minutes), so a read compares like with like.
        let stored = header(currentEpoch)
        let removable = Self.removable(expiresAt: expiresAt, staleUntil: stored.storedStaleUntil)
        let replaced: String?
        if size <= DiskCacheConfiguration.Engine.sqliteRowLimit {
            replaced = try translatingErrors {
                try write(recreating: true) { connection in
                    let epoch = try adoptEpoch(from: connection)
                    return try EntryRecord.seal(
                        keyBytes: keyBytes, valueBytes: valueBytes, header: header(epoch),
                        binding: .storeRow(name: name, file: nil), key: epoch.sealingSubkey
                    ) { sealed in
                        try upsert(
                            name: name, removable: removable, now: now, sealed: sealed, file: nil, on: connection)
                    }
                }
            }
        } else {
            replaced = try writeLarge(name: name, removable: removable, now: now) { epoch, file, fd, path in
                try EntryRecord.write(
                    keyBytes: keyBytes, valueBytes: valueBytes, header: header(epoch),
                    binding: .storeRow(name: name, file: file), key: epoch.sealingSubkey, to: fd, path: path)
            }
        }
        unlinkLargeFile(replaced, of: name)
        count { $0.insertions += 1 }
        try enforceLimits(sparing: name)
    }

    /// Inserts or replaces the row `name` and moves the totals by the difference, in the caller's write
    /// transaction; writes the recency buffer too when it is due.
    ///
    /// - Returns: The file of the replaced row, to unlink once this transaction commits.
    func upsert(
        name: String, removable: Int64?, now: Date, sealed: UnsafeRawBufferPointer?, file: String?,
        size: Int? = nil, on connection: SQLiteConnection
    ) throws -> String? {
        let old = try connection.withStatement("SELECT size, file FROM entry WHERE name = ?1") { statement in
            try statement.bind(name, at: 1)
            return try statement.step() ? (Int(statement.int64(at: 0)), try statement.text(at: 1)) : nil
        }
        let size = size ?? sealed?.count ?? 0
        try connection.withStatement(
            """
            INSERT INTO entry(name, serial, removable, accessed, size, file, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            ON CONFLICT(name) DO UPDATE SET serial = ?2, removable = ?3, accessed = ?4, size = ?5, file = ?6, value = ?7
            """
        ) { statement in
            try statement.bind(name, at: 1)
            try statement.bind(nextSerial(), at: 2)
            if let removable { try statement.bind(removable, at: 3) } else { try statement.bindNull(at: 3) }
            try statement.bind(Self.milliseconds(now), at: 4)
            try statement.bind(Int64(size), at: 5)
            if let file { try statement.bind(file, at: 6) } else { try statement.bindNull(at: 6) }
            if let sealed { try statement.bind(borrowing: sealed, at: 7) } else { try statement.bindNull(at: 7) }
            _ = try statement.step()
        }
        try moveTotals(count: old == nil ? 1 : 0, bytes: size &- (old?.0 ?? 0), on: connection)
        try flushRecencyIfDue(on: connection)
        return old?.1.flatMap { $0 == file ? nil : $0 }
    }

    /// A serial for a row being written (``State/lastSerial``).
    func nextSerial() -> Int64 {
        state.withLock { state in
            state.lastSerial &+= 1
            return state.lastSerial
        }
    }

    /// Adds to the stored count and bytes, in the caller's write transaction.
    func moveTotals(count: Int, bytes: Int, on connection: SQLiteConnection) throws {
        guard count != 0 || bytes != 0 else { return }
        try connection.withStatement("UPDATE totals SET count = count + ?1, bytes = bytes + ?2 WHERE id = 1") {
            try $0.bind(Int64(count), at: 1)
            try $0.bind(Int64(bytes), at: 2)
            _ = try $0.step()
        }
    }

    // MARK: - Remove

    func remove(keyBytes: Data) throws {
        try requireWritable("remove an entry")
        let name = try translatingErrors { try namer.hexName(of: keyBytes) }
        let file = try unlessGone(nil) {
            try write { connection -> String?? in
                let found = try connection.withStatement("SELECT size, file FROM entry WHERE name = ?1") {
                    try $0.bind(name, at: 1)
                    return try $0.step() ? (Int($0.int64(at: 0)), try $0.text(at: 1)) : nil
                }
                guard let found else { return nil }
                try connection.withStatement("DELETE FROM entry WHERE name = ?1") {
                    try $0.bind(name, at: 1)
                    _ = try $0.step()
                }
                try moveTotals(count: -1, bytes: 0 &- found.0, on: connection)
                return .some(found.1)
            }
        }
        if case .some(let file) = file { unlinkLargeFile(file, of: name) }
    }

    /// Removes each of `rows` that is still the row read (same name and serial), in batches, and unlinks
    /// their large-value files after the commit.
    ///
    /// - Returns: How many rows were removed.
    @discardableResult
    func removeRows(_ rows: [SQLiteEntryRow]) throws -> Int {
        guard !rows.isEmpty, !isReadOnly else { return 0 }
        var removed = 0
        for start in stride(from: 0, to: rows.count, by: Self.batchSize) {
            let batch = rows[start..<min(start + Self.batchSize, rows.count)]
            let gone = try unlessGone([]) {
                try write { connection -> [SQLiteEntryRow] in
                    var gone: [SQLiteEntryRow] = []
                    for row in batch {
                        try connection.withStatement("DELETE FROM entry WHERE name = ?1 AND serial = ?2") {
                            try $0.bind(row.name, at: 1)
                            try $0.bind(row.serial, at: 2)
                            _ = try $0.step()
                        }
                        if connection.changes > 0 { gone.append(row) }
                    }
                    try moveTotals(count: -gone.count, bytes: 0 &- gone.reduce(0) { $0 &+ $1.size }, on: connection)
                    return gone
                }
            }
            for row in gone { unlinkLargeFile(row.file, of: row.name) }
            removed += gone.count
        }
        return removed
    }
}

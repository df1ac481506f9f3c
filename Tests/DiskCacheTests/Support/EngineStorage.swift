import CacheCore
import Foundation
import SealedRecord
import StrataTestSupport
import Testing

@testable import DiskCache

/// A store's storage, read and changed underneath its engine, for the tests that run on every engine
/// (``TestStore/engines``): the file engine's entry and counter files, or the SQLite engine's rows of
/// `store.sqlite` (and the files under `large/` they name).
///
/// Reads never go through the engine (its totals, its caches, its connections), so a test can hold what an
/// engine says against what its storage holds; changes stand in for damage, or for another process.
struct EngineStorage {
    let folder: TemporaryFolder
    let engine: DiskCacheConfiguration.Engine

    init(_ folder: TemporaryFolder, _ engine: DiskCacheConfiguration.Engine) {
        precondition(engine != .automatic, "a test names the engine whose storage it reads")
        self.folder = folder
        self.engine = engine
    }

    var entriesFolder: URL { folder.store.appendingPathComponent("entries") }
    var tagsFolder: URL { folder.store.appendingPathComponent("tags") }
    var largeFolder: URL { folder.store.appendingPathComponent(SQLiteEngine.largeFolderName) }
    var databasePath: String { folder.store.appendingPathComponent(SQLiteEngine.databaseName).path }

    // MARK: - Entries

    /// The sealed records the store holds, by entry name (the key's keyed hash, 64 hex digits): each entry
    /// file's bytes, or each row's value (or the bytes of the file under `large/` it names).
    func records() throws -> [String: Data] {
        switch engine {
        case .sqlite:
            typealias Row = (name: String, file: String?, value: Data)
            let rows: [Row] =
                try withDatabase { connection -> [Row] in
                    try connection.withStatement("SELECT name, file, value FROM entry") { statement -> [Row] in
                        var rows: [Row] = []
                        while try statement.step() {
                            rows.append(
                                (
                                    try statement.text(at: 0) ?? "", try statement.text(at: 1),
                                    Data(try statement.blob(at: 2) ?? [])
                                ))
                        }
                        return rows
                    }
                } ?? []
            var records: [String: Data] = [:]
            for row in rows {
                records[row.name] =
                    try row.file.map { try Data(contentsOf: largeFolder.appendingPathComponent($0)) } ?? row.value
            }
            return records
        default:
            var records: [String: Data] = [:]
            for path in allFiles(under: entriesFolder) {
                records[(path as NSString).lastPathComponent] = try Data(
                    contentsOf: entriesFolder.appendingPathComponent(path))
            }
            return records
        }
    }

    /// How many entries the storage holds.
    func count() throws -> Int { try records().count }

    /// The sealed bytes the storage holds for its entries: what `totalBytes` must equal.
    func bytes() throws -> Int { try records().values.reduce(0) { $0 + $1.count } }

    /// Puts `bytes` in the place of entry `name`'s sealed record, as damage does (or a writer who holds the
    /// master key); a row's size becomes that of the new bytes.
    func replaceRecord(named name: String, with bytes: Data) throws {
        switch engine {
        case .sqlite:
            try withDatabase { connection in
                try connection.writeTransaction {
                    try connection.withStatement("UPDATE entry SET value = ?2, size = ?3, file = NULL WHERE name = ?1")
                    {
                        try $0.bind(name, at: 1)
                        try $0.bind(Array(bytes), at: 2)
                        try $0.bind(Int64(bytes.count), at: 3)
                        _ = try $0.step()
                    }
                    guard connection.changes == 1 else { throw CacheError(.io, "no row named \(name)") }
                }
            }
        default:
            try bytes.write(to: entriesFolder.appendingPathComponent("\(name.prefix(2))/\(name)"))
        }
    }

    /// Moves entry `source`'s sealed record over entry `target`'s, as a file renamed over another key's name.
    func moveRecord(named source: String, over target: String) throws {
        switch engine {
        case .sqlite:
            let moved = try #require(try records()[source])
            try replaceRecord(named: target, with: moved)
            try withDatabase { connection in
                try connection.writeTransaction {
                    try connection.withStatement("DELETE FROM entry WHERE name = ?1") {
                        try $0.bind(source, at: 1)
                        _ = try $0.step()
                    }
                }
            }
        default:
            let from = entriesFolder.appendingPathComponent("\(source.prefix(2))/\(source)").path
            let to = entriesFolder.appendingPathComponent("\(target.prefix(2))/\(target)").path
            guard rename(from, to) == 0 else { throw CacheError.posix(errno, "cannot move the entry", path: from) }
        }
    }

    // MARK: - Tag counters

    /// The sealed tag counters, by counter name: the files under `tags/`, or the rows of `tag`.
    func tagCounters() throws -> [String: Data] {
        switch engine {
        case .sqlite:
            return try withDatabase { connection -> [String: Data] in
                try connection.withStatement("SELECT name, counter FROM tag") { statement -> [String: Data] in
                    var counters: [String: Data] = [:]
                    while try statement.step() {
                        counters[try statement.text(at: 0) ?? ""] = Data(try statement.blob(at: 1) ?? [])
                    }
                    return counters
                }
            } ?? [:]
        default:
            var counters: [String: Data] = [:]
            for path in allFiles(under: tagsFolder) {
                counters[(path as NSString).lastPathComponent] = try Data(
                    contentsOf: tagsFolder.appendingPathComponent(path))
            }
            return counters
        }
    }

    /// Puts `bytes` in the place of counter `name`, creating it if there is none.
    func replaceTagCounter(named name: String, with bytes: Data) throws {
        switch engine {
        case .sqlite:
            try withDatabase { connection in
                try connection.writeTransaction {
                    try connection.withStatement("INSERT OR REPLACE INTO tag(name, counter) VALUES (?1, ?2)") {
                        try $0.bind(name, at: 1)
                        try $0.bind(Array(bytes), at: 2)
                        _ = try $0.step()
                    }
                }
            }
        default:
            let path = try #require(allFiles(under: tagsFolder).first { $0.hasSuffix(name) })
            try bytes.write(to: tagsFolder.appendingPathComponent(path))
        }
    }

    /// Loses counter `name`: its file or its row is deleted.
    func removeTagCounter(named name: String) throws {
        switch engine {
        case .sqlite:
            try withDatabase { connection in
                try connection.writeTransaction {
                    try connection.withStatement("DELETE FROM tag WHERE name = ?1") {
                        try $0.bind(name, at: 1)
                        _ = try $0.step()
                    }
                    guard connection.changes == 1 else { throw CacheError(.io, "no counter named \(name)") }
                }
            }
        default:
            let path = try #require(allFiles(under: tagsFolder).first { $0.hasSuffix(name) })
            try FileManager.default.removeItem(at: tagsFolder.appendingPathComponent(path))
        }
    }

    /// Loses every counter: the `tags/` folder, or every row of `tag`.
    func removeAllTagCounters() throws {
        switch engine {
        case .sqlite:
            try withDatabase { connection in
                try connection.writeTransaction { try connection.execute("DELETE FROM tag") }
            }
        default:
            try FileManager.default.removeItem(at: tagsFolder)
        }
    }

    // MARK: - The key epoch

    /// The salt of the key epoch in use: in `store.check` for the file engine, in the database for SQLite.
    func epochSalt() throws -> Data {
        switch engine {
        case .sqlite:
            return try #require(
                try withDatabase { connection -> Data? in
                    try connection.withStatement("SELECT value FROM meta WHERE name = 'epoch'") { statement -> Data? in
                        try statement.step() ? try statement.blob(at: 0).map { Data($0) } : nil
                    }
                } ?? nil)
        default:
            return try Data(contentsOf: folder.store.appendingPathComponent("store.check")).subdata(in: 8..<40)
        }
    }

    // MARK: - The database

    /// Runs `body` on a connection of its own to the store's database (never creating one); `nil` when
    /// there is no database.
    @discardableResult
    private func withDatabase<T>(_ body: (SQLiteConnection) throws -> T) throws -> T? {
        guard FileManager.default.fileExists(atPath: databasePath) else { return nil }
        var options = SQLiteConnection.Options()
        options.createIfMissing = false
        let connection = try SQLiteConnection(path: databasePath, options: options)
        defer { connection.close() }
        return try body(connection)
    }
}

extension DiskCache {
    /// The name of `key`'s entry on either engine (its keyed hash, 64 hex digits): its file's name under
    /// `entries/`, or its row's name.
    func entryName(for key: Key) throws -> String {
        let bytes = try key.canonicalBytes
        switch engine {
        case let files as FileEngine: return try files.store.fileName(for: bytes)
        case let sqlite as SQLiteEngine: return try sqlite.namer.hexName(of: bytes)
        default: preconditionFailure("no entry names on \(type(of: engine))")
        }
    }

    /// Where `verify()` reports `key`'s entry: its file's path, or the database's path and its row's name.
    func reportedPath(for key: Key) throws -> String {
        switch engine {
        case let sqlite as SQLiteEngine: return sqlite.databasePath + "#" + (try entryName(for: key))
        default: return try entryPath(for: key)
        }
    }

    /// The tag counters' naming and sealing, on either engine.
    var tagCounters: TagCounters {
        get throws {
            switch engine {
            case let files as FileEngine: return files.store.tagCounters
            case let sqlite as SQLiteEngine: return try sqlite.tagCounters
            default: preconditionFailure("no tag counters on \(type(of: engine))")
            }
        }
    }

    /// A record sealed for entry `name` under the store's current epoch, bound as the engine binds it (to the
    /// file name, or to the row): what only a holder of the master key could write.
    func sealedRecord(named name: String, keyBytes: Data, valueBytes: Data) throws -> Data {
        let (epoch, binding): (Epoch, RecordBinding) =
            switch engine {
            case let files as FileEngine: (files.store.epoch, .entryFile(name: name))
            case let sqlite as SQLiteEngine: (sqlite.currentEpoch, .storeRow(name: name, file: nil))
            default: preconditionFailure("no sealed records on \(type(of: engine))")
            }
        let header = EntryRecord.Header(
            epochID: epoch.id, createdAt: Date(), expiresAt: nil, cost: nil, keyLength: keyBytes.count,
            valueLength: valueBytes.count)
        return try EntryRecord.seal(
            keyBytes: keyBytes, valueBytes: valueBytes, header: header, binding: binding, key: epoch.sealingSubkey
        ) { Data($0) }
    }

    /// Starts a new key epoch in this instance and deletes nothing, as a wipe that died before deleting
    /// anything leaves the store: the file engine's wipe stopped after its new `store.check`, or the SQLite
    /// engine's after the commit of its new epoch. Other instances on the folder learn of it as they would of
    /// another process's wipe.
    func startNewEpochDeletingNothing() throws {
        switch engine {
        case let files as FileEngine:
            try files.store.removeAll(deletingEntries: false)
        case let sqlite as SQLiteEngine:
            var options = SQLiteConnection.Options()
            options.createIfMissing = false
            let connection = try SQLiteConnection(path: sqlite.databasePath, options: options)
            defer { connection.close() }
            let salt = (0..<KeyCheckRecord.saltSize).map { _ in UInt8.random(in: 0...255) }
            try connection.writeTransaction {
                try connection.withStatement("UPDATE meta SET value = ?1 WHERE name = 'epoch'") {
                    try $0.bind(salt, at: 1)
                    _ = try $0.step()
                }
            }
            // The instance that wiped knows its new epoch at once, as the engine's own wipe adopts it.
            _ = try sqlite.read { try sqlite.adoptEpoch(from: $0) }
        default:
            preconditionFailure("no key epoch on \(type(of: engine))")
        }
    }
}

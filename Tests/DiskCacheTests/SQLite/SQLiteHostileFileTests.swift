import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// What the SQLite layer does with a database that is damaged, foreign, inherited across `fork()`, on
/// read-only media or on a full volume: a typed error, never a hang, a crash or a change outside the store.
@Suite struct SQLiteHostileFileTests {
    let folder = TemporaryFolder(label: "sqlite")

    // MARK: - Foreign items where the database belongs

    @Test(.timeLimit(.minutes(10)), arguments: ["", "-wal", "-shm"])
    func fifoAtTheDatabaseOrItsSideFilesIsRefusedWithoutBlocking(suffix: String) throws {
        // Given a FIFO (no writer ever opens it) where the database, its WAL or its shared memory belongs
        try Plant.fifo(at: folder.database + suffix)

        // When a connection opens the database (a blocking open or read would hang here)
        let error = #expect(throws: SQLiteError.self) { try makeConnection(folder) }

        // Then it is refused as a foreign item naming that file
        #expect(error?.kind == .notRegularFile)
        #expect(error?.path == folder.database + suffix)
        #expect(error?.detail == "a FIFO, not a regular file")
        #expect(error?.cacheError.code == .io)
    }

    @Test(arguments: ["", "-wal", "-shm"])
    func symbolicLinkAtTheDatabaseOrItsSideFilesIsRefusedAndItsTargetUntouched(suffix: String) throws {
        // Given a link where the database, its WAL or its shared memory belongs, aiming at a file outside
        let canary = try Canary(in: folder.url)
        let before = canary.snapshot()
        try Plant.link(at: folder.database + suffix, to: canary.url.path + "/notes.txt")

        // When a connection opens the database
        let error = #expect(throws: SQLiteError.self) { try makeConnection(folder) }

        // Then it is refused, and the link's target is as it was
        #expect(error?.kind == .notRegularFile)
        #expect(error?.detail == "a symbolic link, not a regular file")
        #expect(canary.snapshot() == before)
    }

    @Test func folderAtTheDatabaseIsRefused() throws {
        try FileManager.default.createDirectory(atPath: folder.database, withIntermediateDirectories: false)
        let error = #expect(throws: SQLiteError.self) { try makeConnection(folder) }
        #expect(error?.kind == .notRegularFile)
        #expect(error?.detail == "a folder, not a regular file")
    }

    // MARK: - Damaged databases

    @Test(arguments: [16, 4_096, 100_000])
    func garbageFileIsNotADatabaseAndCountsAsCorrupt(size: Int) throws {
        // Given a file of random bytes where the database belongs
        var generator = SplitMix64(seed: UInt64(size))
        let garbage = (0..<size).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try Data(garbage).write(to: URL(fileURLWithPath: folder.database))

        // When a connection opens it
        let error = #expect(throws: SQLiteError.self) { try makeConnection(folder) }

        // Then SQLITE_NOTADB is reported as a corrupt database, and the file is left for the engine to move
        #expect(error?.primaryCode == 26)  // SQLITE_NOTADB
        #expect(error?.kind == .corrupt)
        #expect(error?.isCorrupt == true)
        #expect(error?.path == folder.database)
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder.database)) == Data(garbage))
    }

    @Test func sparseFileOfAbsurdSizeIsNotADatabase() throws {
        try Plant.sparse(at: folder.database, size: 200 << 30, prefix: Data("SQLite format 3\0".utf8))
        let error = #expect(throws: SQLiteError.self) { try makeConnection(folder) }
        #expect(error?.isCorrupt == true)
    }

    @Test func damagedTablePageIsReportedAsCorrupt() throws {
        // Given a database whose table fills several pages, checkpointed into the database file and closed
        do {
            let connection = try makeConnection(folder)
            for id in 1...30 { try insertItem(connection, id: Int64(id), value: Array(repeating: 9, count: 1_000)) }
            #expect(try connection.checkpoint(.truncate).isComplete)
        }
        // and the table's root page (page 2: the first table created) overwritten with garbage
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: folder.database))
        try handle.seek(toOffset: 4_096)
        try handle.write(contentsOf: Data(repeating: 0xFF, count: 4_096))
        try handle.close()

        // When the table is read
        let connection = try makeConnection(folder, createTable: false)
        let error = #expect(throws: SQLiteError.self) { try itemCount(connection) }

        // Then SQLITE_CORRUPT is reported as a corrupt database
        #expect(error?.primaryCode == 11)  // SQLITE_CORRUPT
        #expect(error?.kind == .corrupt)
        #expect(error?.path == folder.database)
    }

    // MARK: - Fork

    @Test func connectionInheritedAcrossForkIsRefusedAndNeverClosed() throws {
        // Given the only connection to a database with a non-persistent WAL that holds a commit
        var options = SQLiteConnection.Options()
        options.persistentWAL = false
        let connection = try makeConnection(folder, options: options)
        try insertItem(connection, id: 1, value: [1])
        #expect(fileSize(folder.database + "-wal") > 0)

        // When it is used as if in a child forked after it opened
        connection.openedInForkGeneration &+= 1
        let error = #expect(throws: SQLiteError.self) { try itemCount(connection) }
        let transactionError = #expect(throws: SQLiteError.self) { try connection.writeTransaction {} }
        connection.close()

        // Then every use is refused, and closing did not close the database: a real close by the last
        // connection checkpoints and deletes the WAL (as the control below shows), this one left it
        #expect(error?.kind == .inheritedAcrossFork)
        #expect(transactionError?.kind == .inheritedAcrossFork)
        #expect(!connection.isUsable)
        #expect(fileSize(folder.database + "-wal") > 0)

        // Control: a connection of this process closing for real removes the WAL
        let control = try makeConnection(folder, options: options)
        try insertItem(control, id: 2, value: [2])
        control.close()
        #expect(fileSize(folder.database + "-wal") > 0, "the inherited handle is still open, so not the last")
        #expect(throws: SQLiteError.self) { try itemCount(control) }
    }

    @Test func closedConnectionRefusesEveryUse() throws {
        let connection = try makeConnection(folder)
        connection.close()
        connection.close()
        let error = #expect(throws: SQLiteError.self) { try itemCount(connection) }
        #expect(error?.kind == .closed)
    }

    // MARK: - Error mapping

    @Test(arguments: [
        // (extended result code, errno, kind, public code)
        (11, 0, SQLiteError.Kind.corrupt, "io"),  // SQLITE_CORRUPT
        (26, 0, .corrupt, "io"),  // SQLITE_NOTADB
        (5, 0, .busy, "io"),  // SQLITE_BUSY
        (6, 0, .busy, "io"),  // SQLITE_LOCKED
        (13, 0, .full, "outOfSpace"),  // SQLITE_FULL
        (778, ENOSPC, .full, "outOfSpace"),  // SQLITE_IOERR_WRITE
        (778, EDQUOT, .full, "outOfSpace"),
        (8, 0, .readOnly, "readOnly"),  // SQLITE_READONLY
        (14, EROFS, .readOnly, "readOnly"),  // SQLITE_CANTOPEN
        (14, EACCES, .permissionDenied, "permissionDenied"),
        (3, 0, .permissionDenied, "permissionDenied"),  // SQLITE_PERM
        (14, ENOENT, .cannotOpen, "io"),
        (266, EIO, .io, "io"),  // SQLITE_IOERR_READ
        (18, 0, .tooBig, "entryTooLarge"),  // SQLITE_TOOBIG
        (2067, 0, .constraint, "io"),  // SQLITE_CONSTRAINT_UNIQUE
        (1, 0, .sql, "io"),  // SQLITE_ERROR
    ])
    func resultCodesMapToWhatTheEngineAndCallersNeed(
        code: Int32, systemErrno: Int32, kind: SQLiteError.Kind, publicCode: String
    ) {
        // Given an error as a failed call reports it
        var error = SQLiteError(resultCode: code, database: nil, operation: "step", path: "/store/store.sqlite")
        error.systemErrno = systemErrno
        error.kind = SQLiteError.kind(resultCode: code, systemErrno: systemErrno)

        // Then its kind and public error are the table's, and the public error names the database
        #expect(error.kind == kind)
        #expect(error.cacheError.code.description == publicCode)
        #expect(error.cacheError.path == "/store/store.sqlite")
        #expect(error.cacheError.message.hasPrefix("cannot step SQLite database: "))
    }
}

/// The SQLite layer on file systems that refuse writes (a read-only bind mount) or run out of space (a
/// tiny tmpfs).
@Suite(.enabled(if: Mounts.available, Comment(rawValue: Mounts.requirement)))
struct SQLiteMountedDatabaseTests {
    let folder = TemporaryFolder(label: "sqlite")

    @Test func databaseOnReadOnlyMediaIsReadableAndRefusesWritesAsReadOnly() throws {
        // Given a database with a row, closed (its WAL files are kept), seen through a read-only mount
        let store = folder.url.appendingPathComponent("db", isDirectory: true)
        let view = folder.url.appendingPathComponent("view", isDirectory: true)
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: view, withIntermediateDirectories: true)
        do {
            let writer = try SQLiteConnection(path: store.path + "/store.sqlite")
            try writer.execute(
                "CREATE TABLE item(id INTEGER PRIMARY KEY, number INTEGER, real REAL, text TEXT, value BLOB)")
            try insertItem(writer, id: 1, value: [1, 2, 3])
        }
        let mount = try Mounts.bindReadOnly(store, at: view)
        defer { mount.unmount() }

        // When it is opened read-only, and opened as usual
        var options = SQLiteConnection.Options()
        options.readOnly = true
        let reader = try SQLiteConnection(path: view.path + "/store.sqlite", options: options)
        let usual = try SQLiteConnection(path: view.path + "/store.sqlite")

        // Then both read the row, and a write fails as read-only naming the database
        #expect(try itemCount(reader) == 1)
        #expect(try itemCount(usual) == 1)
        for connection in [reader, usual] {
            let error = #expect(throws: SQLiteError.self) { try insertItem(connection, id: 2, value: [2]) }
            #expect(error?.kind == .readOnly)
            #expect(error?.cacheError.code == .readOnly)
            #expect(error?.path == view.path + "/store.sqlite")
        }
    }

    @Test func newDatabaseInReadOnlyFolderFailsAsReadOnly() throws {
        // Given an empty folder seen through a read-only mount
        let view = folder.url.appendingPathComponent("view", isDirectory: true)
        try FileManager.default.createDirectory(at: view, withIntermediateDirectories: true)
        let mount = try Mounts.bindReadOnly(view, at: view)
        defer { mount.unmount() }

        // When a database is created there
        let error = #expect(throws: SQLiteError.self) {
            try SQLiteConnection(path: view.path + "/store.sqlite")
        }

        // Then the failure is read-only, not a vague "cannot open"
        #expect(error?.kind == .readOnly)
        #expect(error?.cacheError.code == .readOnly)
    }

    @Test func fullVolumeIsOutOfSpaceNamingTheDatabaseAndRollsBack() throws {
        // Given a database on a 256 KiB file system
        let volume = folder.url.appendingPathComponent("small", isDirectory: true)
        let mount = try Mounts.tmpfs(at: volume, bytes: 256 << 10)
        defer { mount.unmount() }
        let path = volume.path + "/store.sqlite"
        let connection = try SQLiteConnection(path: path)
        try connection.execute(
            "CREATE TABLE item(id INTEGER PRIMARY KEY, number INTEGER, real REAL, text TEXT, value BLOB)")

        // When rows of 4 KiB are written until a write fails
        var stored: Int64 = 0
        var failure: SQLiteError?
        while failure == nil && stored < 1_000 {
            do {
                try insertItem(connection, id: stored, value: Array(repeating: 5, count: 4_096))
                stored += 1
            } catch let error as SQLiteError {
                failure = error
            }
        }

        // Then it fails as a full volume naming the database, and every earlier row is still there
        #expect(failure?.kind == .full)
        #expect(failure?.cacheError.code == .outOfSpace)
        #expect(failure?.path == path)
        #expect(!connection.isInTransaction)
        #expect(stored > 10)
        #expect(try itemCount(connection) == stored)
    }
}

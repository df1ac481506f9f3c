import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// Write transactions, the busy timeout between two connections, and checkpoints.
@Suite struct SQLiteTransactionTests {
    struct Refused: Error {}

    let folder = TemporaryFolder(label: "sqlite")

    @Test func writeTransactionCommitsEveryStatement() throws {
        // Given a connection
        let connection = try makeConnection(folder)
        // When a transaction inserts two rows and returns
        let returned = try connection.writeTransaction {
            try insertRow(connection, id: 1)
            try insertRow(connection, id: 2)
            return "done"
        }
        // Then both rows are there for another connection too, and no transaction is left open
        #expect(returned == "done")
        #expect(!connection.isInTransaction)
        #expect(try itemCount(makeConnection(folder)) == 2)
    }

    @Test func writeTransactionRollsBackEverythingWhenItsBodyThrows() throws {
        // Given a table holding one row
        let connection = try makeConnection(folder)
        try insertItem(connection, id: 1, value: [1])
        // When a transaction inserts a row, replaces the first, then throws
        #expect(throws: Refused.self) {
            try connection.writeTransaction {
                try insertRow(connection, id: 2)
                try connection.withStatement("UPDATE item SET value = x'02' WHERE id = 1") { _ = try $0.step() }
                throw Refused()
            }
        }
        // Then neither change is there, and the connection writes again
        #expect(!connection.isInTransaction)
        #expect(try itemCount(connection) == 1)
        let value = try connection.withStatement("SELECT value FROM item WHERE id = 1") {
            (statement: SQLiteStatement) throws in
            _ = try statement.step()
            return try statement.blob(at: 0)
        }
        #expect(value == [1])
        try insertItem(connection, id: 3, value: [3])
        #expect(try itemCount(connection) == 2)
    }

    @Test func transactionsDoNotNest() throws {
        let connection = try makeConnection(folder)
        let error = #expect(throws: SQLiteError.self) {
            try connection.writeTransaction { try connection.writeTransaction { try insertRow(connection, id: 1) } }
        }
        #expect(error?.kind == .sql)
        #expect(try itemCount(connection) == 0)
    }

    @Test func aWriterWithoutBusyTimeoutFailsAtOnceWithBusyWhileAnotherWrites() throws {
        // Given one connection inside a write transaction
        let holder = try makeConnection(folder)
        var options = SQLiteConnection.Options()
        options.busyTimeoutMilliseconds = 0
        let other = try makeConnection(folder, options: options)
        try holder.writeTransaction {
            try insertRow(holder, id: 1)
            // When a second connection with no busy timeout starts a write
            let error = #expect(throws: SQLiteError.self) { try other.writeTransaction { try insertRow(other, id: 2) } }
            // Then it fails with busy, without waiting, and its reads still work (WAL)
            #expect(error?.kind == .busy)
            #expect(error?.cacheError.code == .io)
            #expect(other.busyWaits == 0)
            #expect(try itemCount(other) == 0)
        }
        #expect(try itemCount(other) == 1)
    }

    @Test(.timeLimit(.minutes(10)))
    func aWriterWaitsThroughTheBusyTimeoutUntilTheOtherWriterCommits() async throws {
        // Given one connection inside a write transaction
        let holder = try makeConnection(folder)
        try holder.execute("BEGIN IMMEDIATE")
        try insertRow(holder, id: 1)

        // When a second connection (60 s busy timeout) starts a write on another thread
        let waiting = Gate()
        let path = folder.database
        let writer = Task {
            try await Self.onOwnThread {
                var options = SQLiteConnection.Options()
                options.busyTimeoutMilliseconds = 60_000
                let other = try SQLiteConnection(path: path, options: options)
                other.onBusyWait = { _ in waiting.open() }
                try other.writeTransaction { try insertRow(other, id: 2) }
                return other.busyWaits
            }
        }
        // and the first commits only once the second is waiting for its lock
        try await waiting.wait()
        try holder.execute("COMMIT")

        // Then the second write goes through after waiting, and both rows are there
        #expect(try await writer.value >= 1)
        #expect(try itemCount(holder) == 2)
    }

    @Test(.timeLimit(.minutes(10)))
    func switchingANewDatabaseToWALWaitsForAWriterInRollbackMode() async throws {
        // Given a database still in rollback mode (as a new store is until its first connection switches it),
        // written by another connection that holds its write lock
        var holder: OpaquePointer?
        #expect(sqlite3_open_v2(folder.database, &holder, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK)
        defer { sqlite3_close_v2(holder) }
        let setUp = "CREATE TABLE item(id INTEGER PRIMARY KEY); BEGIN IMMEDIATE"
        #expect(sqlite3_exec(holder, setUp, nil, nil, nil) == SQLITE_OK)

        // When a connection opens it (switching it to WAL) on another thread
        let waiting = Gate()
        let path = folder.database
        let opening = Task {
            try await Self.onOwnThread {
                // Opened on a failed open too, so that a failure fails the test rather than hanging it.
                defer { waiting.open() }
                var options = SQLiteConnection.Options()
                options.busyTimeoutMilliseconds = 60_000
                options.onBusyWait = { _ in waiting.open() }
                let connection = try SQLiteConnection(path: path, options: options)
                return (
                    connection.busyWaits,
                    try connection.withStatement("PRAGMA journal_mode") { statement in
                        _ = try statement.step()
                        return try statement.text(at: 0)
                    }
                )
            }
        }
        // and the holder commits only once the opening connection waits for the lock (SQLite itself returns
        // SQLITE_BUSY at once there: the switch holds a read lock when it asks for the write lock)
        try await waiting.wait()
        #expect(sqlite3_exec(holder, "COMMIT", nil, nil, nil) == SQLITE_OK)

        // Then the open goes through after waiting, in WAL mode
        let (waits, mode) = try await opening.value
        #expect(waits >= 1)
        #expect(mode == "wal")
    }

    @Test func checkpointsCopyTheWALAndTruncateEmptiesIt() throws {
        // Given a WAL holding some commits
        let connection = try makeConnection(folder)
        for id in 1...20 { try insertItem(connection, id: Int64(id), value: Array(repeating: 7, count: 3_000)) }
        let wal = folder.database + "-wal"
        #expect(fileSize(wal) > 60_000)

        // When it is checkpointed passively, then truncated
        let passive = try connection.checkpoint(.passive)
        let truncated = try connection.checkpoint(.truncate)

        // Then the passive one copied every frame, and the truncating one left an empty WAL
        #expect(passive.isComplete)
        #expect(passive.walFrames > 20)
        #expect(passive.checkpointedFrames == passive.walFrames)
        #expect(truncated == .init(walFrames: 0, checkpointedFrames: 0, isComplete: true))
        #expect(fileSize(wal) == 0)
        #expect(try itemCount(connection) == 20)
    }

    @Test func restartCheckpointIsIncompleteNotAnErrorWhileAReaderHoldsTheWAL() throws {
        // Given a commit in the WAL and a reader of another connection holding a snapshot of it
        var options = SQLiteConnection.Options()
        options.busyTimeoutMilliseconds = 0
        let connection = try makeConnection(folder, options: options)
        let reader = try makeConnection(folder)
        try insertItem(connection, id: 1, value: [1])
        try reader.readTransaction {
            #expect(try itemCount(reader) == 1)
            try insertItem(connection, id: 2, value: [2])
            // When a restart checkpoint runs
            let result = try connection.checkpoint(.restart)
            // Then it reports that it could not finish, without throwing
            #expect(!result.isComplete)
        }
        // And it finishes once the reader is gone
        #expect(try connection.checkpoint(.restart).isComplete)
    }

    /// Runs `body` on a thread of its own, not the cooperative pool's (it blocks in SQLite's busy handler).
    static func onOwnThread<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
}

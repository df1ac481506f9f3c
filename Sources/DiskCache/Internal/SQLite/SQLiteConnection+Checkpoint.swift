#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

extension SQLiteConnection {
    /// How much a checkpoint does (sqlite.org/c3ref/wal_checkpoint_v2.html).
    enum CheckpointMode: Sendable {
        /// Copies what it can without waiting for readers or writers; never blocks.
        case passive
        /// Waits (busy handler) for the writer, copies everything, then waits for readers so the next writer
        /// starts the WAL from its beginning.
        case restart
        /// As ``restart``, then truncates the WAL file to zero bytes.
        case truncate

        var code: Int32 {
            switch self {
            case .passive: return SQLITE_CHECKPOINT_PASSIVE
            case .restart: return SQLITE_CHECKPOINT_RESTART
            case .truncate: return SQLITE_CHECKPOINT_TRUNCATE
            }
        }
    }

    /// What a checkpoint did.
    struct CheckpointResult: Equatable, Sendable {
        /// Frames in the WAL when the checkpoint ended (0 after a completed ``CheckpointMode/truncate``).
        var walFrames: Int
        /// Frames of the WAL copied into the database.
        var checkpointedFrames: Int
        /// Whether everything was copied and, for restart and truncate, the WAL was reset; `false` when a
        /// reader or writer of another connection kept part of it (`SQLITE_BUSY`, retry later).
        var isComplete: Bool
    }

    /// Copies the WAL back into the database file.
    ///
    /// A read-write connection also checkpoints after its own commits (``SQLiteWALGuard``): passively at
    /// 1,000 WAL pages, truncating past `journal_size_limit`; this is for the engine's idle time and for
    /// wipes.
    ///
    /// - Parameters:
    ///   - mode: How hard to try.
    ///   - waitMilliseconds: The longest wait, in milliseconds, for other connections' locks (their writer, and
    ///     for restart and truncate their readers); `nil` waits up to the busy timeout.
    /// - Returns: What was copied; a checkpoint another connection blocked is returned incomplete, not thrown.
    /// - Throws: ``SQLiteError`` for any failure but `SQLITE_BUSY` (I/O, corruption, a closed connection).
    /// - Complexity: I/O proportional to the WAL's size.
    func checkpoint(_ mode: CheckpointMode, waitingAtMost waitMilliseconds: Int? = nil) throws -> CheckpointResult {
        let database = try openDatabase()
        boundedBusyWait = waitMilliseconds
        defer { boundedBusyWait = nil }
        var walFrames: Int32 = 0
        var checkpointedFrames: Int32 = 0
        let result = sqlite3_wal_checkpoint_v2(database, nil, mode.code, &walFrames, &checkpointedFrames)
        guard result == SQLITE_OK || result & 0xFF == SQLITE_BUSY else {
            throw SQLiteError(resultCode: result, database: database, operation: "checkpoint", path: path)
        }
        return CheckpointResult(
            walFrames: Int(max(0, walFrames)), checkpointedFrames: Int(max(0, checkpointedFrames)),
            isComplete: result == SQLITE_OK && walFrames == checkpointedFrames)
    }
}

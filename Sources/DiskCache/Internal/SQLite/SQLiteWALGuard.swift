#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// The WAL hook of a read-write connection: after each commit of this connection it checkpoints passively
/// once the WAL holds ``checkpointPages`` frames, and, once the WAL is past the connection's
/// `journal_size_limit` (the log could not start again from its beginning because a reader of another
/// connection was in it), runs a truncating checkpoint whose wait for those readers is bounded.
///
/// Why the engine's own hook: a reader that never leaves a gap starves SQLite's automatic checkpoint, which is
/// passive, and the WAL then grows without bound (DISK-ENGINE.md, "checkpoint starvation"). Installing a hook
/// replaces SQLite's automatic checkpoint, so its passive checkpoint at 1,000 pages is done here as well.
///
/// SQLite calls the hook from the committing `sqlite3_step`, after the write lock is released, on the thread
/// running the statement; a checkpoint may run there (SQLite's own automatic checkpoint does).
///
/// Thread safety: not thread-safe; used only from the connection's thread, like the connection.
final class SQLiteWALGuard {
    /// WAL frames after which a commit checkpoints passively (SQLite's automatic checkpoint: 1,000).
    let checkpointPages: Int
    /// The WAL size, in bytes, past which a commit truncates the WAL (the connection's `journal_size_limit`).
    let limitBytes: Int64
    /// How long a truncating checkpoint past the limit may wait for readers, in milliseconds: the first one
    /// past the limit, and again the first one past each further multiple of it (2×, 3×, …); the ones between
    /// do not wait, so readers that stay cost each commit one try, and this connection one wait per limit's
    /// worth of growth, not one wait per commit.
    let restartWaitMilliseconds: Int
    /// Bytes of one WAL frame: a 24-byte header and one page.
    private(set) var frameBytes: Int64 = 4_096 + 24
    /// Frames in the WAL after the connection's last commit; 0 before its first.
    private(set) var framesAfterLastCommit = 0
    /// How the hook's checkpoints ended so far: for tests and statistics.
    private(set) var passiveCheckpoints = 0
    /// Truncating checkpoints started because the WAL was past the limit, and how many of them finished.
    private(set) var limitCheckpoints = 0
    private(set) var limitCheckpointsCompleted = 0
    /// Whether a truncating checkpoint past the limit failed and none has finished since.
    private(set) var starved = false
    /// The WAL size in bytes past which the next truncating checkpoint waits: after a wait, the multiple of the
    /// limit above the WAL's size then; 0 again (the next one past the limit waits) once a commit finds the WAL
    /// within the limit, whichever connection reset it.
    private var waitsPastBytes: Int64 = 0
    /// Runs a checkpoint on the hook's connection; set by the connection that installs the hook.
    private let checkpoint: (SQLiteConnection.CheckpointMode, _ waitMilliseconds: Int?) -> Bool

    /// - Parameters:
    ///   - checkpointPages: Frames after which a commit checkpoints passively.
    ///   - limitBytes: The WAL's size bound in bytes; a negative one (no limit) never truncates.
    ///   - restartWaitMilliseconds: The bounded wait of a truncating checkpoint, in milliseconds.
    ///   - checkpoint: Runs a checkpoint in a mode with a bounded wait (`nil`: the connection's busy timeout),
    ///     returning whether it completed.
    init(
        checkpointPages: Int, limitBytes: Int64, restartWaitMilliseconds: Int,
        checkpoint: @escaping (SQLiteConnection.CheckpointMode, Int?) -> Bool
    ) {
        self.checkpointPages = checkpointPages
        self.limitBytes = limitBytes
        self.restartWaitMilliseconds = restartWaitMilliseconds
        self.checkpoint = checkpoint
    }

    /// Installs the hook on `database`, whose pages are `pageSize` bytes. The hook holds this object
    /// unretained: keep it alive for as long as the connection is open (the connection stores it).
    func install(on database: OpaquePointer, pageSize: Int) {
        frameBytes = Int64(pageSize) + 24
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = sqlite3_wal_hook(
            database,
            { context, _, _, frames in
                guard let context else { return SQLITE_OK }
                Unmanaged<SQLiteWALGuard>.fromOpaque(context).takeUnretainedValue().committed(frames: Int(frames))
                return SQLITE_OK
            }, context)
    }

    /// The WAL's size in bytes with `frames` frames (its 32-byte header, then the frames).
    func walBytes(frames: Int) -> Int64 { 32 + Int64(frames) * frameBytes }

    /// After a commit that left `frames` frames in the WAL. Internal, not private, so tests can drive the
    /// hook's decisions with an injected checkpoint and no database.
    func committed(frames: Int) {
        framesAfterLastCommit = frames
        let bytes = walBytes(frames: frames)
        let pastLimit = limitBytes >= 0 && bytes > limitBytes
        if !pastLimit { waitsPastBytes = 0 }
        guard frames >= checkpointPages else { return }
        // Past the limit, the log could not start again from its beginning: a reader of another connection was
        // in it at each commit. Wait for such readers (boundedly) and truncate, so the WAL never stays far above
        // its limit while readers come and go.
        if pastLimit {
            limitCheckpoints += 1
            let wait = restartWait(walBytes: bytes)
            if checkpoint(.truncate, wait) {
                limitCheckpointsCompleted += 1
                starved = false
            } else {
                starved = true
            }
            return
        }
        passiveCheckpoints += 1
        _ = checkpoint(.passive, nil)
    }

    /// The wait, in milliseconds, of the truncating checkpoint of a commit that left `bytes` in the WAL, past
    /// the limit. Readers that never all leave at once (several processes reading most of the time) can outlast
    /// one wait; with no other, the WAL then grows until a no-wait try happens to land in a gap. Waiting again
    /// once per limit's worth of growth gives the WAL another real chance to truncate at each multiple, for one
    /// wait per connection per 4 MiB written.
    private func restartWait(walBytes bytes: Int64) -> Int {
        if bytes <= waitsPastBytes { return 0 }
        // The next multiple of the limit strictly above this size (a limit of 0 waits at every commit).
        waitsPastBytes = limitBytes > 0 ? (bytes / limitBytes + 1) * limitBytes : bytes
        return restartWaitMilliseconds
    }
}

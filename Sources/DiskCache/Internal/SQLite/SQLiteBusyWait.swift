#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

/// The busy handler of one connection: when a lock is held by another connection, waits with SQLite's own
/// back-off (1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, then 100 ms) until the lock is free or the
/// connection's busy timeout is used up, and counts the waits.
///
/// Why a handler of our own rather than `sqlite3_busy_timeout`: the same waiting, plus a count of waits the
/// engine can report and a hook a test can wait on, so the "writer waits for the other writer" behaviour is
/// tested without timing guesses.
///
/// Thread safety: not thread-safe; SQLite calls it on the thread running the connection's statement, and
/// the connection is used by one thread at a time.
final class SQLiteBusyWait {
    /// How long to wait in total for one lock, in milliseconds; 0 never waits.
    let timeoutMilliseconds: Int
    /// A shorter total wait for the locks of one operation (a checkpoint that must not hold up a commit), in
    /// milliseconds; `nil` uses ``timeoutMilliseconds``.
    var boundedMilliseconds: Int?
    /// How many times a statement of this connection waited for a lock so far.
    private(set) var waits = 0
    /// Called on the waiting thread before each wait, with the wait's number (0 for the first of a lock).
    /// For tests.
    var onWait: (@Sendable (Int) -> Void)?

    private static let delays = [1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100]

    /// - Parameter timeoutMilliseconds: The total wait for one lock, in milliseconds (negative counts as 0).
    init(timeoutMilliseconds: Int) {
        self.timeoutMilliseconds = max(0, timeoutMilliseconds)
    }

    /// Installs the handler on `database`. The handler holds this object unretained: keep it alive for as
    /// long as the connection is open (the connection stores it).
    func install(on database: OpaquePointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = sqlite3_busy_handler(
            database,
            { context, attempt in
                guard let context else { return 0 }
                let wait = Unmanaged<SQLiteBusyWait>.fromOpaque(context).takeUnretainedValue()
                return wait.waitBeforeRetry(attempt: Int(attempt)) ? 1 : 0
            }, context)
    }

    /// Sleeps before retry `attempt` (0-based) and returns `true`, or returns `false` once the timeout is
    /// used up. Also for a lock conflict SQLite returns without calling the handler (the connection's
    /// switch to WAL).
    func waitBeforeRetry(attempt: Int) -> Bool {
        let delays = Self.delays
        let index = min(attempt, delays.count - 1)
        // Time already waited for this lock: the delays so far, then 100 ms for every attempt past the table.
        let waited =
            delays.prefix(index).reduce(0, +) + max(0, attempt - (delays.count - 1)) * delays[delays.count - 1]
        let delay = min(delays[index], (boundedMilliseconds ?? timeoutMilliseconds) - waited)
        guard delay > 0 else { return false }
        waits += 1
        onWait?(attempt)
        _ = sqlite3_sleep(Int32(delay))
        return true
    }
}

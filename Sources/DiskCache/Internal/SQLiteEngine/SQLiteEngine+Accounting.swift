import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Totals, statistics and recency: all kept in the database, changed in write transactions the engine runs
// anyway, so a read never starts one.
extension SQLiteEngine {
    // MARK: - Totals

    func totals() -> (count: Int, bytes: Int) {
        let stored = try? read { try totals(on: $0) }
        // Totals edited below 0 read as 0 (verify() repairs them): limits compare without overflow.
        return (Int(clamping: max(0, stored?.count ?? 0)), Int(clamping: max(0, stored?.bytes ?? 0)))
    }

    /// The stored count and bytes, on `connection`.
    func totals(on connection: SQLiteConnection) throws -> (count: Int64, bytes: Int64) {
        try connection.withStatement("SELECT count, bytes FROM totals WHERE id = 1") { statement in
            try statement.step() ? (statement.int64(at: 0), statement.int64(at: 1)) : (0, 0)
        }
    }

    // MARK: - Statistics

    /// The columns of `totals` that hold the statistics, in ``StatisticsCounters/fields`` order.
    static let statisticsColumns = ["hits", "misses", "insertions", "evictions", "expirations", "corrupt", "failures"]

    /// Adds parameters 1–7 to ``statisticsColumns``, in order, each capped at `Int64.max`. Written out: built
    /// from the list at run time it cost a `strata get` more than the update itself.
    static let statisticsUpdate = """
        UPDATE totals SET hits = min(hits + ?1, 9223372036854775807),
            misses = min(misses + ?2, 9223372036854775807), insertions = min(insertions + ?3, 9223372036854775807),
            evictions = min(evictions + ?4, 9223372036854775807),
            expirations = min(expirations + ?5, 9223372036854775807), corrupt = min(corrupt + ?6, 9223372036854775807),
            failures = min(failures + ?7, 9223372036854775807)
        WHERE id = 1
        """

    func statistics() -> CacheStatistics {
        let stored =
            (try? read { connection in
                try connection.withStatement(
                    "SELECT \(Self.statisticsColumns.joined(separator: ", ")) FROM totals WHERE id = 1"
                ) { statement -> StatisticsCounters in
                    var counters = StatisticsCounters()
                    guard try statement.step() else { return counters }
                    for (index, field) in StatisticsCounters.fields.enumerated() {
                        counters[keyPath: field] = Int(clamping: max(statement.int64(at: index), 0))
                    }
                    return counters
                }
            }) ?? StatisticsCounters()
        let total = stored + state.withLock { $0.pending }
        return CacheStatistics(
            hits: total.hits, misses: total.misses, insertions: total.insertions, evictions: total.evictions,
            expirations: total.expirations, corruptEntriesRemoved: total.corruptEntriesRemoved,
            errors: total.readFailures)
    }

    /// Writes the pending counters and, in the same transaction, up to ``recencyWriteBatch`` buffered
    /// accesses (a process that flushes before it exits then commits once, not twice), then the other
    /// accesses in transactions of their own.
    func flushStatistics() throws {
        let snapshot = state.withLock { $0.pending }
        guard !isReadOnly else { return }
        let accesses = state.withLock { $0.recency.take(atMost: Self.recencyWriteBatch) }
        guard !snapshot.isZero || !accesses.isEmpty else { return }
        // A store deleted from outside is not made again for its counters: they stay pending.
        let flushed = try unlessGone(false) {
            try write { connection in
                try writeRecency(accesses, on: connection)
                guard !snapshot.isZero else { return }
                try connection.withStatement(Self.statisticsUpdate) {
                    statement in
                    for (index, field) in StatisticsCounters.fields.enumerated() {
                        try statement.bind(Int64(snapshot[keyPath: field]), at: index + 1)
                    }
                    _ = try statement.step()
                }
            }
            return true
        }
        if flushed {
            state.withLock { $0.pending = $0.pending - snapshot }
            try flushRecency()
        }
    }

    /// Copies the WAL into the database and empties it when this instance's last commit left it at
    /// ``closingCheckpointFrames`` or more, without waiting for anyone: a reader or writer elsewhere makes it
    /// stop where it is, and a later close or SQLite's automatic checkpoint does the rest.
    ///
    /// Truncating, not passive: the next process to open the store rebuilds the WAL index from the file and
    /// counts nothing in it as copied, so a WAL left full after a passive checkpoint would be read, copied and
    /// synced again by every later close.
    func checkpointIfWALIsLarge() {
        guard !isReadOnly else { return }
        _ = try? writer.withLock { connection in
            guard let connection, connection.walFramesAfterLastCommit >= Self.closingCheckpointFrames else { return }
            _ = try connection.checkpoint(.truncate, waitingAtMost: 0)
        }
    }

    // MARK: - Recency

    /// Writes up to ``recencyWriteBatch`` buffered accesses, in the caller's write transaction, when a second
    /// has passed since the buffer was last emptied or the buffer is full; the next write transactions take
    /// the rest.
    func flushRecencyIfDue(on connection: SQLiteConnection) throws {
        let now = clock.now
        let due = state.withLock { state -> [(name: String, accessed: Int64)] in
            guard !state.recency.isEmpty,
                state.recency.count >= Self.recencyBufferLimit
                    || now.timeIntervalSince(state.lastRecencyFlush) * 1_000 >= Double(Self.recencyResolution)
                    || now < state.lastRecencyFlush
            else { return [] }
            let batch = state.recency.take(atMost: Self.recencyWriteBatch)
            if state.recency.isEmpty { state.lastRecencyFlush = now }
            return batch
        }
        try writeRecency(due, on: connection)
    }

    /// Writes every access buffered now, ``recencyWriteBatch`` per transaction (hits noted meanwhile may go
    /// out with them or wait for the next write).
    func flushRecency() throws {
        guard !isReadOnly else {
            state.withLock { $0.recency = RecencyBuffer() }
            return
        }
        var left = state.withLock { $0.recency.count }
        while left > 0 {
            let batch = state.withLock { $0.recency.take(atMost: Self.recencyWriteBatch) }
            guard !batch.isEmpty else { return }
            left -= batch.count
            let written = try unlessGone(false) {
                try write { try writeRecency(batch, on: $0) }
                return true
            }
            // A store deleted from outside is not made again for access times.
            guard written else { return }
        }
    }

    private func writeRecency(_ accesses: [(name: String, accessed: Int64)], on connection: SQLiteConnection) throws {
        for (name, accessed) in accesses {
            // Never back in time: a write since the read stamped a later access.
            try connection.withStatement("UPDATE entry SET accessed = ?2 WHERE name = ?1 AND accessed < ?2") {
                try $0.bind(name, at: 1)
                try $0.bind(accessed, at: 2)
                _ = try $0.step()
            }
        }
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The idle checkpoint: some time after this process's last write, the WAL is checkpointed and truncated to
// zero bytes, so a store at rest leaves no WAL behind (Docs/DiskEngine-SQLite.md, "Checkpoints").
extension SQLiteEngine {
    /// How long after this process's last write the WAL is truncated, in seconds.
    static let idleCheckpointDelay: Double = 2
    /// How long the idle checkpoint waits for other processes' readers and writer, in milliseconds.
    static let idleCheckpointWaitMilliseconds = 100

    /// Notes a write (called with the state lock held, from ``write(recreating:_:)``) and returns what to do
    /// once the lock is released.
    static func noteWrite(_ state: inout State, at now: Date) -> SQLiteIdleCheckpoint.Action {
        state.idle.wrote(at: now)
    }

    /// Acts on an answer of the idle-checkpoint machine, outside every lock.
    func perform(_ action: SQLiteIdleCheckpoint.Action) {
        switch action {
        case .none:
            return
        case .schedule(let seconds):
            let scheduler = state.withLock { $0.idleScheduler }
            // Weak: a pending timer never keeps a closed cache alive, and fires into nothing once it is gone.
            scheduler.schedule(after: seconds) { [weak self] in self?.idleTimerFired() }
        case .checkpoint:
            let completed = checkpointIdle()
            let now = clock.now
            perform(state.withLock { $0.idle.checkpointed(completely: completed, at: now) })
        }
    }

    /// The idle timer fired: checkpoints if the last write is old enough, or waits again for the rest.
    func idleTimerFired() {
        let now = clock.now
        perform(state.withLock { $0.idle.fired(at: now) })
    }

    /// Truncates the WAL on the writer connection, waiting boundedly for other processes.
    ///
    /// - Returns: Whether the WAL was emptied (`true` too when there is nothing to do here).
    private func checkpointIdle() -> Bool {
        guard !isReadOnly else { return true }
        return writer.withLock { connection in
            guard let connection, connection.isUsable else { return true }
            let result = try? connection.checkpoint(
                .truncate, waitingAtMost: Self.idleCheckpointWaitMilliseconds)
            state.withLock { $0.idleCheckpoints += 1 }
            return result?.isComplete ?? false
        }
    }
}

import Dispatch

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Runs work once after a delay: what the SQLite engine's idle checkpoint waits with. Tests inject one they
/// drive by hand, together with a manual clock, so no test sleeps.
protocol SQLiteIdleScheduler: Sendable {
    /// Runs `work` once, about `seconds` from now, on some thread other than the caller's.
    ///
    /// - Parameters:
    ///   - seconds: The delay, in seconds.
    ///   - work: What to run; it must not assume any lock of the caller is held.
    func schedule(after seconds: Double, _ work: @escaping @Sendable () -> Void)
}

/// The production scheduler: Dispatch's global utility queue. A pending timer costs no thread.
struct DispatchIdleScheduler: SQLiteIdleScheduler {
    func schedule(after seconds: Double, _ work: @escaping @Sendable () -> Void) {
        DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + max(0, seconds), execute: work)
    }
}

/// When to truncate the WAL after this process stops writing: a pure state machine (the engine keeps it under
/// its state lock and acts on the answers outside it).
///
/// One timer at most is pending per engine, and only after a write: a store nobody writes to costs nothing.
/// A write while the timer is pending moves the deadline (the timer, when it fires early, waits again for the
/// rest); a checkpoint another process's reader kept from finishing is tried again a few times, then left to
/// the next write.
struct SQLiteIdleCheckpoint {
    /// What the engine does next.
    enum Action: Equatable {
        /// Nothing.
        case none
        /// Schedules the timer to fire after this many seconds.
        case schedule(Double)
        /// Runs the truncating checkpoint now.
        case checkpoint
    }

    /// How long after this process's last write the WAL is truncated, in seconds.
    let delay: Double
    /// How many times a checkpoint that did not finish is tried again before waiting for the next write.
    let retries: Int
    /// The last write not yet followed by a checkpoint.
    private(set) var lastWrite: Date?
    /// Whether a timer is pending.
    private(set) var isScheduled = false
    private var failures = 0

    init(delay: Double, retries: Int = 3) {
        self.delay = delay
        self.retries = retries
    }

    /// A write began at `now`.
    mutating func wrote(at now: Date) -> Action {
        lastWrite = now
        failures = 0
        guard !isScheduled else { return .none }
        isScheduled = true
        return .schedule(delay)
    }

    /// The timer fired at `now`.
    mutating func fired(at now: Date) -> Action {
        guard let lastWrite else {
            isScheduled = false
            return .none
        }
        let due = lastWrite.addingTimeInterval(delay)
        if now < due { return .schedule(due.timeIntervalSince(now)) }
        self.lastWrite = nil
        isScheduled = false
        return .checkpoint
    }

    /// The checkpoint ran at `now` and finished or not.
    mutating func checkpointed(completely: Bool, at now: Date) -> Action {
        guard !completely, lastWrite == nil, !isScheduled, failures < retries else { return .none }
        failures += 1
        lastWrite = now
        isScheduled = true
        return .schedule(delay)
    }
}

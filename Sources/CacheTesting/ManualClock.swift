import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A clock that moves only when told to, so tests check expiry and timeouts without sleeping.
///
/// ```swift
/// let clock = ManualClock()
/// let cache = try MemoryCache<String, Int>(clock: clock)
/// cache.setValue(1, forKey: "a", expiry: .seconds(10))
/// clock.advance(by: 10)
/// #expect(cache.value(forKey: "a") == nil)
/// ```
///
/// A task that sleeps on it (``sleep(until:)``, as the loader timeouts of `LoadOptions` do) wakes when
/// ``advance(by:)-(TimeInterval)`` or ``set(to:)`` moves the clock to or past its deadline; a test waits
/// with ``waitForSleepers(count:)`` until the sleep it wants to end has begun.
///
/// Thread-safe: every method may be called from any thread; each takes one small lock and is O(1) apart
/// from waking sleepers, O(*s*) in the number of sleepers. Sleepers are resumed outside the lock.
public final class ManualClock: CacheClock {
    private struct State {
        var now: Date
        var lastID: UInt64 = 0
        var sleepers: [UInt64: (deadline: Date, continuation: CheckedContinuation<Void, any Error>)] = [:]
        var sleepStarts = 0
        var sleeperWaits: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state: Locked<State>

    /// The instant a clock reads when created without a `start`: 2026-01-01 00:00:00 UTC.
    ///
    /// A whole second, so offsets such as `defaultStart + 10` are exact in every instant encoding a
    /// tier may use (seconds as `Double`, milliseconds, nanoseconds).
    public static let defaultStart = Date(timeIntervalSince1970: 1_767_225_600)

    /// Creates a clock that reads `start`.
    ///
    /// - Parameter start: The initial time; ``defaultStart`` by default, so tests do not depend on the
    ///   real date.
    public init(start: Date = ManualClock.defaultStart) {
        state = Locked(State(now: start))
    }

    /// The clock's current time.
    public var now: Date { state.withLock { $0.now } }

    /// Moves the clock forward (or backward, with a negative value) by `seconds`, waking the sleepers
    /// whose deadline it reaches.
    ///
    /// - Parameter seconds: The change, in seconds (fractions allowed).
    public func advance(by seconds: TimeInterval) {
        move { $0.addingTimeInterval(seconds) }
    }

    /// Moves the clock forward (or backward) by `duration`.
    ///
    /// - Parameter duration: The change, converted to seconds as a `TimeInterval`.
    public func advance(by duration: Duration) {
        advance(by: duration.timeInterval)
    }

    /// Sets the clock to `date`, which may be earlier than now, waking the sleepers whose deadline it
    /// reaches.
    ///
    /// - Parameter date: The new time.
    public func set(to date: Date) {
        move { _ in date }
    }

    /// Suspends until the clock is moved to or past `deadline`.
    ///
    /// - Parameter deadline: The instant to wake at; one already reached returns at once.
    /// - Throws: `CancellationError` when the sleeping task is cancelled.
    public func sleep(until deadline: Date) async throws {
        let id = state.withLock { state -> UInt64 in
            state.lastID += 1
            return state.lastID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (now, waits): (Result<Void, any Error>?, [CheckedContinuation<Void, Never>]) = state.withLock {
                    state in
                    if deadline <= state.now { return (.success(()), []) }
                    if Task.isCancelled { return (.failure(CancellationError()), []) }
                    state.sleepers[id] = (deadline, continuation)
                    state.sleepStarts += 1
                    let ready = state.sleeperWaits.filter { $0.count <= state.sleepStarts }
                    state.sleeperWaits.removeAll { $0.count <= state.sleepStarts }
                    return (nil, ready.map(\.continuation))
                }
                if let now { continuation.resume(with: now) }
                for wait in waits { wait.resume() }
            }
        } onCancel: {
            state.withLock { $0.sleepers.removeValue(forKey: id) }?.continuation.resume(throwing: CancellationError())
        }
    }

    /// The number of sleeps begun on this clock so far (woken or not).
    public var sleepCount: Int { state.withLock { $0.sleepStarts } }

    /// Suspends until at least `count` sleeps have begun on this clock since it was created, so a test
    /// moves the clock only once the sleep it means to end is waiting.
    ///
    /// - Parameter count: The number of sleeps begun to wait for.
    public func waitForSleepers(count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.sleepStarts >= count { return true }
                state.sleeperWaits.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func move(_ change: (Date) -> Date) {
        let due = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = change(state.now)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }
}

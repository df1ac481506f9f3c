#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A lock with a condition to wait on: `NSCondition`'s four operations.
///
/// `NSCondition` is in Foundation proper, not FoundationEssentials: on Linux it would load libFoundation and
/// ICU into every process that links the Redis tier. There this is a pthread mutex and condition variable
/// (which ThreadSanitizer observes, as it does `NSCondition`'s); elsewhere it is an `NSCondition`.
///
/// Thread safety: every method may be called from any thread; ``wait(atMost:)`` and ``broadcast()`` only
/// with the lock held.
///
/// `@unchecked Sendable` is sound: the only stored properties are `let`s: the pthread mutex and condition (or
/// the `NSCondition`), allocated in `init`, never moved, used only through their thread-safe C (or
/// Foundation) calls, and freed in `deinit`, when no reference remains.
final class ConditionLock: @unchecked Sendable {
    #if canImport(FoundationEssentials)
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>

    init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = .allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }
    func broadcast() { pthread_cond_broadcast(condition) }

    /// Waits for a broadcast (or a spurious wake-up) for at most `duration`. The lock is held.
    ///
    /// The condition waits until a wall-clock time (`CLOCK_REALTIME`), as `NSCondition.wait(until:)` does;
    /// callers bound `duration` and judge their own deadline on a monotonic clock.
    func wait(atMost duration: Duration) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let (seconds, attoseconds) = duration.components
        let nanoseconds = Int(now.tv_nsec) + Int(attoseconds / 1_000_000_000)
        var until = timespec()
        until.tv_sec = now.tv_sec + Int(seconds) + nanoseconds / 1_000_000_000
        until.tv_nsec = nanoseconds % 1_000_000_000
        _ = pthread_cond_timedwait(condition, mutex, &until)
    }
    #else
    private let condition = NSCondition()

    func lock() { condition.lock() }
    func unlock() { condition.unlock() }
    func broadcast() { condition.broadcast() }

    /// Waits for a broadcast (or a spurious wake-up) for at most `duration`. The lock is held.
    func wait(atMost duration: Duration) {
        let (seconds, attoseconds) = duration.components
        _ = condition.wait(until: Date(timeIntervalSinceNow: Double(seconds) + Double(attoseconds) / 1e18))
    }
    #endif
}

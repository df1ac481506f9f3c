#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A value behind a pthread mutex: the baseline's lock, the same kind of lock as CacheCore's `Locked`.
///
/// `Locked` is `package` access and so not visible from this separate package; this is an equivalent,
/// so that "a dictionary behind the same lock type" compares data structures, not locks.
final class PthreadLocked<State>: @unchecked Sendable {
    // @unchecked Sendable is sound: `state` is touched only between lock and unlock of `mutex`, which is
    // allocated once, never moved, and destroyed only in deinit.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var state: State

    init(_ initialState: State) {
        state = initialState
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    @inline(__always)
    func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&state)
    }
}

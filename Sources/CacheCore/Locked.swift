#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value guarded by one small lock: a `pthread_mutex_t` on Linux, an `os_unfair_lock` on Darwin.
///
/// Strata's modules share this type (it is `package`, not public). `Synchronization.Mutex` would do the
/// same job, but on Swift 6.3's Linux toolchain it locks through futex calls that ThreadSanitizer does
/// not observe, so TSan reports false races on everything it guards and CI could not gate on TSan.
/// pthread and os_unfair_lock calls are intercepted by TSan, and they keep the Apple minimum low.
///
/// Never call user code (a loader, a callback, an observer) inside `withLock`.
package final class Locked<State>: @unchecked Sendable {
    // @unchecked Sendable is sound: `state` is read and written only inside `withLock`, between
    // lock and unlock of `lock`, which is allocated once, never moved and freed only in deinit.
    #if canImport(Darwin)
    private let lock: UnsafeMutablePointer<os_unfair_lock>
    #else
    private let lock: UnsafeMutablePointer<pthread_mutex_t>
    #endif
    private var state: State

    /// Creates a lock guarding `initialState`.
    package init(_ initialState: State) {
        state = initialState
        #if canImport(Darwin)
        lock = .allocate(capacity: 1)
        lock.initialize(to: os_unfair_lock())
        #else
        lock = .allocate(capacity: 1)
        lock.initialize(to: pthread_mutex_t())
        pthread_mutex_init(lock, nil)
        #endif
    }

    deinit {
        #if !canImport(Darwin)
        pthread_mutex_destroy(lock)
        #endif
        lock.deinitialize(count: 1)
        lock.deallocate()
    }

    /// Runs `body` with exclusive access to the state and returns its result.
    @inline(__always)
    package func withLock<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        #if canImport(Darwin)
        os_unfair_lock_lock(lock)
        defer { os_unfair_lock_unlock(lock) }
        #else
        pthread_mutex_lock(lock)
        defer { pthread_mutex_unlock(lock) }
        #endif
        return try body(&state)
    }
}

extension Locked where State: Sendable {
    /// A copy of the current state.
    package var value: State { withLock { $0 } }
}

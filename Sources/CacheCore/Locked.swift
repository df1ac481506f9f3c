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
/// On glibc the mutex is adaptive (`PTHREAD_MUTEX_ADAPTIVE_NP`): a thread that finds it taken spins
/// briefly before sleeping in the kernel. Strata's critical sections last a few hundred nanoseconds,
/// while a futex sleep and wake-up cost microseconds, so a default mutex made two threads on a sharded
/// MemoryCache slower than one (memory-concurrent: 0.67×, with a quarter of the time in the scheduler).
///
/// The lock word sits alone on its own cache line, so that locks allocated one after another (the
/// shards of a cache) do not share a line that every lock and unlock writes.
///
/// `withLock` is inlinable so that a caller's closure is specialized and inlined into it; the stored
/// properties are `@usableFromInline` for that reason only and are not API.
///
/// Never call user code (a loader, a callback, an observer) inside `withLock`.
///
/// `Sendable` only when `State` is (the conformance is at the end of the file): the lock alone cannot keep
/// a non-`Sendable` state's references from leaving `withLock`, so whoever keeps such a state in a lock
/// proves, where it stores it, that nothing of it is shared (as `ContextPool` and `SQLiteEngine` do).
@usableFromInline
package final class Locked<State> {
    #if canImport(Darwin)
    @usableFromInline typealias Primitive = os_unfair_lock
    #else
    @usableFromInline typealias Primitive = pthread_mutex_t
    #endif

    /// One cache line: the lock is allocated at this alignment and size.
    private static var lineSize: Int { 128 }

    @usableFromInline let lock: UnsafeMutablePointer<Primitive>
    // `@exclusivity(unchecked)`: a class's stored property otherwise gets a dynamic exclusivity check
    // (a runtime call) on every access. Skipping it is safe: `state` is only reached through `withLock`,
    // which holds the mutex for the whole access, so no two accesses can overlap.
    @usableFromInline @exclusivity(unchecked) var state: State

    /// Creates a lock guarding `initialState`.
    package init(_ initialState: State) {
        state = initialState
        // 128 bytes, not 64: adjacent-line prefetchers on x86 pull lines in pairs.
        let raw = UnsafeMutableRawPointer.allocate(
            byteCount: max(Self.lineSize, MemoryLayout<Primitive>.size), alignment: Self.lineSize)
        lock = raw.bindMemory(to: Primitive.self, capacity: 1)
        #if canImport(Darwin)
        lock.initialize(to: os_unfair_lock())
        #else
        lock.initialize(to: pthread_mutex_t())
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if canImport(Glibc)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ADAPTIVE_NP))
        #endif
        pthread_mutex_init(lock, &attributes)
        pthread_mutexattr_destroy(&attributes)
        #endif
    }

    deinit {
        #if !canImport(Darwin)
        pthread_mutex_destroy(lock)
        #endif
        lock.deinitialize(count: 1)
        UnsafeMutableRawPointer(lock).deallocate()
    }

    /// Runs `body` with exclusive access to the state and returns its result.
    @inlinable
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

    /// Runs `body` with exclusive access to the state if no thread holds the lock now; never waits.
    ///
    /// - Returns: `body`'s result, or `nil` when the lock was held (by another thread, or by this one: the
    ///   lock is not recursive, and a caller already inside `withLock` gets `nil` rather than a deadlock).
    /// - Complexity: O(1) plus `body`.
    @inlinable
    package func withLockIfAvailable<Result, Failure: Error>(
        _ body: (inout State) throws(Failure) -> Result
    ) throws(Failure) -> Result? {
        #if canImport(Darwin)
        guard os_unfair_lock_trylock(lock) else { return nil }
        defer { os_unfair_lock_unlock(lock) }
        #else
        guard pthread_mutex_trylock(lock) == 0 else { return nil }
        defer { pthread_mutex_unlock(lock) }
        #endif
        return try body(&state)
    }
}

/// `@unchecked Sendable` is sound: `state` is read and written only inside `withLock`, between lock and unlock
/// of `lock` (allocated in `init`, never moved, freed in `deinit`), so no two accesses overlap; and `State` is
/// `Sendable`, so what `withLock` hands out may be shared (the argument of `Synchronization.Mutex`).
extension Locked: @unchecked Sendable where State: Sendable {}

extension Locked where State: Sendable {
    /// A copy of the current state.
    package var value: State { withLock { $0 } }
}

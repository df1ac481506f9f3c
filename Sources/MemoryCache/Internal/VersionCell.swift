#if canImport(Darwin)
import CacheCore
#else
import Synchronization
#endif

/// One version counter that hits read without taking the cache's lock: a tag's version, or the cache's
/// tag generation.
///
/// On Linux it is a `Synchronization.Atomic` (a load on the hit path is one instruction, and
/// ThreadSanitizer observes it). `Atomic` needs macOS 15 and iOS 18 while the package supports macOS 13 and
/// iOS 16, so on Darwin a `Locked` value stands in, as for MultiCache's hit counter.
///
/// Thread-safe: `load()` and `increment()` may run on any thread at once.
@usableFromInline
final class VersionCell: Sendable {
    #if canImport(Darwin)
    private let value: Locked<UInt64>

    init(_ initial: UInt64) { value = Locked(initial) }

    /// The current version.
    @usableFromInline
    func load() -> UInt64 { value.withLock { $0 } }

    /// Adds one to the version.
    func increment() { value.withLock { $0 &+= 1 } }
    #else
    @usableFromInline let value: Atomic<UInt64>

    init(_ initial: UInt64) { value = Atomic(initial) }

    /// The current version. Acquiring: a hit that reads a version sees what the removal that set it did.
    @inlinable
    func load() -> UInt64 { value.load(ordering: .acquiring) }

    /// Adds one to the version.
    func increment() { value.add(1, ordering: .sequentiallyConsistent) }
    #endif
}

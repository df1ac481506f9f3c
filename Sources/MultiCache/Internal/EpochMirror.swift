#if canImport(Darwin)
import CacheCore
#else
import Synchronization
#endif

/// A copy of ``LoadOnceStateMachine/mutationEpoch`` that a read can take without the coordinator's lock.
///
/// Every place that can advance the epoch (beginning and ending a write or removal, beginning and ending the
/// store of a loaded value) publishes it here inside the same critical section.
///
/// A read remembers the epoch before it asks its first tier, but needs it only when it writes a hit back,
/// which a tier-0 hit (the commonest read) never does; taking the lock for it cost a lock round trip on
/// every read. The copy is stored inside the same critical section that bumps the epoch, so a read that
/// loads it sees either the value before a mutation's fence (and its write-back is then refused under the
/// lock, where the real epoch is compared) or a value after it, exactly as if it had read the epoch under
/// the lock at that instant.
///
/// On Linux the copy is a `Synchronization.Atomic`, which ThreadSanitizer observes (its operations are
/// compiled into this module as atomic instructions). `Atomic` needs macOS 15 and iOS 18 while Strata
/// supports macOS 13 and iOS 16, so on Apple platforms the copy sits behind its own small lock.
struct EpochMirror: ~Copyable, Sendable {
    #if canImport(Darwin)
    private let epoch = Locked<UInt64>(0)

    /// The epoch last published.
    func load() -> UInt64 { epoch.withLock { $0 } }

    /// Publishes `value`; call it while holding the coordinator's lock, right after the epoch changed.
    func publish(_ value: UInt64) { epoch.withLock { $0 = value } }
    #else
    private let epoch = Atomic<UInt64>(0)

    /// The epoch last published.
    func load() -> UInt64 { epoch.load(ordering: .acquiring) }

    /// Publishes `value`; call it while holding the coordinator's lock, right after the epoch changed.
    func publish(_ value: UInt64) { epoch.store(value, ordering: .releasing) }
    #endif
}

#if !canImport(Darwin)
import Synchronization
#endif

/// A copy of ``CoordinatorStateMachine/changeSequence`` that a read can take without the coordinator's
/// lock.
///
/// Only ``CoordinatorStorage`` writes it, inside the critical section of every event it hands to the
/// machine, so no event that advances the sequence can leave the copy behind.
///
/// A read notes the sequence before it asks its first tier, but needs it only when it writes a hit back,
/// which a tier-0 hit (the commonest read) never does; taking the lock for it cost a lock round trip on
/// every read. Because the copy is stored inside the critical section that advances the sequence, a read
/// that loads it sees either the value before a write's fence (and its write-back is then refused under
/// the lock, where the real sequence is compared) or a value after it, exactly as if it had read the
/// sequence under the lock at that instant.
///
/// On Linux the copy is a `Synchronization.Atomic`, which ThreadSanitizer observes (its operations are
/// compiled into this module as atomic instructions). `Atomic` needs macOS 15 and iOS 18 while Strata
/// supports macOS 13 and iOS 16, so on Apple platforms the copy sits behind its own small lock. Inlinable, so
/// that a load-once hit in another module reads it without a call.
@usableFromInline
struct ChangeSequenceMirror: ~Copyable, Sendable {
    #if canImport(Darwin)
    @usableFromInline let sequence = Locked<UInt64>(0)

    /// The sequence last published.
    @inlinable
    func load() -> UInt64 { sequence.withLock { $0 } }

    /// Publishes `value`; call it while holding the coordinator's lock.
    func publish(_ value: UInt64) { sequence.withLock { $0 = value } }
    #else
    @usableFromInline let sequence = Atomic<UInt64>(0)

    /// The sequence last published.
    @inlinable
    func load() -> UInt64 { sequence.load(ordering: .acquiring) }

    /// Publishes `value`; call it while holding the coordinator's lock.
    func publish(_ value: UInt64) { sequence.store(value, ordering: .releasing) }
    #endif
}

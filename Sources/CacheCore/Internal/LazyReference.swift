#if !canImport(Darwin)
import Synchronization
#endif

/// An object created on first use and then shared: a cache's load-once coordinator, which a cache that
/// never loads should not pay for.
///
/// ``ifCreated`` is what the hot paths of a cache read (a write or removal checks whether it has loads
/// to fence): one atomic load on Linux. `AtomicLazyReference` needs macOS 15 and iOS 18 while Strata
/// supports macOS 13 and iOS 16, so on Apple platforms the reference sits behind its own small lock, as
/// ``ChangeSequenceMirror`` does.
///
/// Thread-safe: any number of threads may call ``object(orCreate:)`` at once; all get the one object.
@usableFromInline
package struct LazyReference<Object: AnyObject & Sendable>: ~Copyable, Sendable {
    #if canImport(Darwin)
    @usableFromInline let reference = Locked<Object?>(nil)
    #else
    @usableFromInline let reference = AtomicLazyReference<Object>()
    #endif

    /// No object yet.
    package init() {}

    /// The object, or `nil` when nobody has asked for it yet; inlinable, so a cache's write checks it
    /// without a call.
    @inlinable
    package var ifCreated: Object? {
        #if canImport(Darwin)
        reference.withLock { $0 }
        #else
        reference.load()
        #endif
    }

    /// The object, created with `make` by the first caller; a racing caller's `make` result is dropped.
    package func object(orCreate make: () -> Object) -> Object {
        #if canImport(Darwin)
        reference.withLock { object in
            if let object { return object }
            let created = make()
            object = created
            return created
        }
        #else
        reference.load() ?? reference.storeIfNil(make())
        #endif
    }
}

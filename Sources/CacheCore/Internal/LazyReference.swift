/// An object created on first use and then shared: a cache's load-once coordinator, which a cache that
/// never loads should not pay for.
///
/// ``ifCreated`` is what the hot paths of a cache read (a write or removal checks whether it has loads
/// to fence): one uncontended lock. Not `AtomicLazyReference`: ThreadSanitizer does not see its ordering, so
/// it reported the object's initialization racing with a reader on another thread (the whole suite under
/// ThreadSanitizer, 5 December 2026), and CI gates on ThreadSanitizer; it also needs macOS 15 and iOS 18.
///
/// Thread-safe: any number of threads may call ``object(orCreate:)`` at once; all get the one object.
@usableFromInline
package struct LazyReference<Object: AnyObject & Sendable>: ~Copyable, Sendable {
    @usableFromInline let reference = Locked<Object?>(nil)

    /// No object yet.
    package init() {}

    /// The object, or `nil` when nobody has asked for it yet; inlinable, so a cache's write checks it
    /// without a call.
    @inlinable
    package var ifCreated: Object? {
        reference.withLock { $0 }
    }

    /// The object, created with `make` by the first caller, under the lock (so `make` must not call back into
    /// this reference); a racing caller waits for it.
    package func object(orCreate make: () -> Object) -> Object {
        reference.withLock { object in
            if let object { return object }
            let created = make()
            object = created
            return created
        }
    }
}

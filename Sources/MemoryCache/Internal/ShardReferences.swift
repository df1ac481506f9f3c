/// Unretained references to a sharded cache's shard objects, in a buffer the cache owns.
///
/// Reading a shard through here neither retains it (no atomic write to the shard's reference count, a
/// cache line both cores would otherwise fight over on every operation) nor touches an array's storage.
/// The element type is the concrete `AnyObject`, so unspecialized code indexes the buffer without
/// looking up generic type metadata.
///
/// `@unchecked Sendable` is sound: the buffer behind the one `let` is written once, in `init`, before the
/// owning cache is shared with any other thread; afterwards it is only read, and it is freed in the owning
/// cache's `deinit`, when no other thread holds a reference to the cache. The objects it refers to are the
/// cache's `Locked` shards, whose state is reached only through their lock.
@usableFromInline
struct ShardReferences: @unchecked Sendable {
    @usableFromInline let base: UnsafeMutablePointer<Unmanaged<AnyObject>>

    /// Copies unretained references to `objects`, which the caller must keep alive until `deallocate()`.
    init(_ objects: [AnyObject]) {
        base = .allocate(capacity: max(objects.count, 1))
        base.initialize(from: objects.map { Unmanaged.passUnretained($0) }, count: objects.count)
    }

    /// The unretained reference to object `position`.
    @inlinable
    subscript(position: Int) -> Unmanaged<AnyObject> { base[position] }

    /// Frees the buffer; the references must not be used afterwards.
    func deallocate() {
        base.deallocate()
    }
}

import CacheCore

/// A write, removal or clear that a ``MultiCache``'s authoritative tier missed, kept to be replayed to it
/// when it answers again (see ``MultiCache/Authority/Replay``).
///
/// A plain value; `Sendable`, and `Codable` when the key is, so a journal can keep it in a file.
public struct PendingWrite<Key: Hashable & Sendable>: Hashable, Sendable {
    /// What the authoritative tier missed.
    public enum Operation: Hashable, Sendable {
        /// The key's entry was stored in the local tiers; the replay copies the local entry.
        case set(Key)
        /// The key's entry was removed.
        case remove(Key)
        /// Every entry carrying the tag was removed.
        case removeAllTagged(String)
        /// Every entry was removed.
        case removeAll
    }

    /// Tells this pending write apart from every other one, so a replay removes exactly what it replayed.
    public var id: UInt64
    /// What to replay.
    public var operation: Operation
    /// The fingerprint of the entry the local tiers held for the key before the first missed write of it
    /// (``MultiCache/Authority/Replay/fingerprint``), or `nil` when they held none. The authoritative tier
    /// still holding that entry (or none) when the write is replayed means nobody wrote the key there
    /// since: the write is replayed. Anything else is a newer write, and the pending one is dropped.
    /// Unused by ``Operation/removeAll`` and ``Operation/removeAllTagged(_:)``, which are always replayed.
    public var base: UInt64?

    /// Creates a pending write.
    ///
    /// - Parameters:
    ///   - id: A value no other pending write in the journal has; a random one unless given.
    ///   - operation: What to replay.
    ///   - base: The fingerprint of the entry the local tiers held before, or `nil` for none.
    public init(id: UInt64 = .random(in: 1...UInt64.max), operation: Operation, base: UInt64?) {
        self.id = id
        self.operation = operation
        self.base = base
    }

    /// The key the write names; `nil` for a clear or a tag removal.
    public var key: Key? {
        switch operation {
        case .set(let key), .remove(let key): key
        case .removeAllTagged, .removeAll: nil
        }
    }
}

extension PendingWrite.Operation: Codable where Key: Codable {}
extension PendingWrite: Codable where Key: Codable {}

/// Where a ``MultiCache`` keeps the writes its authoritative tier missed until they are replayed.
///
/// A journal that outlives the process (a file beside a disk store, say) lets a later process replay what
/// an earlier one could not; ``InMemoryPendingWriteJournal`` keeps them for the life of the process.
///
/// Conformers must be thread-safe: ``update(_:)`` may be called from several tasks at once, and from
/// several processes when the journal is shared, and each call must see and change the list as one atomic
/// step.
public protocol PendingWriteJournal<Key>: Sendable {
    /// The cache's key type.
    associatedtype Key: Hashable & Sendable

    /// Reads the pending writes, oldest first, lets `body` change them, and keeps the result, as one atomic
    /// step.
    ///
    /// - Parameter body: Changes the list; called once, on any thread (a journal may hop to its own queue),
    ///   and must not call the cache.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws (nothing is then kept), or the journal's own storage errors.
    func update<Result: Sendable>(
        _ body: @escaping @Sendable (inout [PendingWrite<Key>]) throws -> Result
    ) async throws -> Result
}

/// A ``PendingWriteJournal`` in memory: pending writes last as long as the process.
///
/// Thread-safe: the list sits behind a lock that is held only while `body` runs.
public final class InMemoryPendingWriteJournal<Key: Hashable & Sendable>: PendingWriteJournal {
    private let writes = Locked<[PendingWrite<Key>]>([])

    /// Creates an empty journal.
    public init() {}

    /// The pending writes now, oldest first.
    public var pendingWrites: [PendingWrite<Key>] { writes.value }

    /// Runs `body` on the list under the journal's lock.
    public func update<Result: Sendable>(
        _ body: @escaping @Sendable (inout [PendingWrite<Key>]) throws -> Result
    ) async throws -> Result {
        try writes.withLock { try body(&$0) }
    }
}

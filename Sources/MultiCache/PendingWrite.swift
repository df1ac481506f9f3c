import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
    /// When that entry expires, or `nil` for never (or no entry). The authority holding nothing once it has
    /// expired is its expiry at work, not a newer removal: the write is replayed.
    public var baseExpiresAt: Date?
    /// The fingerprints of the entries this cache's missed sets of the key stored, oldest first (at most
    /// ``writtenFingerprintLimit``, the latest kept). A missed write may still have landed (the authority
    /// applied it and its answer came too late): the authority holding one of these is this cache's own
    /// write, not a newer one, and the pending write is replayed over it.
    public var writtenFingerprints: [UInt64]
    /// Whether one of this cache's missed writes of the key was a removal, which may have landed as well:
    /// the authority then holding nothing is this cache's own removal, and the pending write is replayed.
    public var includesRemoval: Bool
    /// The replay that is running this write, if any: until ``Claim/expiresAt`` no other replay (in this
    /// process or another sharing the journal) runs it, and reads elsewhere do not judge the authority's
    /// answers, which do not include it yet.
    public var claim: Claim?

    /// A replay's hold on the writes it is running.
    public struct Claim: Hashable, Sendable, Codable {
        /// The replay's identity, random per replay.
        public var owner: UInt64
        /// When the hold ends unless the replay renews it (it does after each write it replays): a replay
        /// whose process died stops holding the journal back then.
        public var expiresAt: Date

        /// Creates a claim.
        ///
        /// - Parameters:
        ///   - owner: The replay's identity.
        ///   - expiresAt: When the hold ends unless renewed.
        public init(owner: UInt64, expiresAt: Date) {
            self.owner = owner
            self.expiresAt = expiresAt
        }
    }

    /// How many fingerprints ``writtenFingerprints`` keeps: 16.
    public static var writtenFingerprintLimit: Int { 16 }

    /// Creates a pending write.
    ///
    /// - Parameters:
    ///   - id: A value no other pending write in the journal has; a random one unless given.
    ///   - operation: What to replay.
    ///   - base: The fingerprint of the entry the local tiers held before, or `nil` for none.
    ///   - baseExpiresAt: That entry's expiry, or `nil`.
    ///   - writtenFingerprints: The fingerprints of the entries this cache's missed sets of the key stored.
    ///   - includesRemoval: Whether one of this cache's missed writes of the key was a removal.
    ///   - claim: The replay running it; `nil` for none.
    public init(
        id: UInt64 = .random(in: 1...UInt64.max), operation: Operation, base: UInt64?, baseExpiresAt: Date? = nil,
        writtenFingerprints: [UInt64] = [], includesRemoval: Bool = false, claim: Claim? = nil
    ) {
        self.id = id
        self.operation = operation
        self.base = base
        self.baseExpiresAt = baseExpiresAt
        self.writtenFingerprints = writtenFingerprints
        self.includesRemoval = includesRemoval
        self.claim = claim
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

extension PendingWrite: Codable where Key: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, operation, base, baseExpiresAt, writtenFingerprints, includesRemoval, claim
    }

    /// Decodes a pending write; one kept by an earlier version, without the fields added since, decodes with
    /// none written, no removal and no claim.
    ///
    /// - Throws: `DecodingError` when a field that every version writes is missing or has the wrong type.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(UInt64.self, forKey: .id),
            operation: try container.decode(Operation.self, forKey: .operation),
            base: try container.decodeIfPresent(UInt64.self, forKey: .base),
            baseExpiresAt: try container.decodeIfPresent(Date.self, forKey: .baseExpiresAt),
            writtenFingerprints: try container.decodeIfPresent([UInt64].self, forKey: .writtenFingerprints) ?? [],
            includesRemoval: try container.decodeIfPresent(Bool.self, forKey: .includesRemoval) ?? false,
            claim: try container.decodeIfPresent(Claim.self, forKey: .claim))
    }
}

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
    /// `body` may be called more than once (a journal that must create its storage first may run it to see
    /// whether there is anything to keep): it must depend only on the list it is given.
    ///
    /// - Parameter body: Changes the list; called on any thread (a journal may hop to its own queue),
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

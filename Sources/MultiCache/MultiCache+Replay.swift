import CacheCore
import Foundation

extension MultiCache.Authority {
    /// Keeps the writes, removals and clears the authoritative tier misses (it cannot be reached) as
    /// pending in a journal, and replays them to it when it answers again, unless it holds a newer write of
    /// the key by then.
    ///
    /// *Newer* is judged without clocks, by what the authority holds: each pending write of a key
    /// remembers the fingerprint of the entry the local tiers held before it (the last one this cache saw
    /// from the authority, or none). When the authority answers again and still holds that entry (or still
    /// none), nobody has written the key there since, and the write is replayed: a pending set copies the
    /// local tiers' current entry, a pending removal removes. When it holds anything else, another writer
    /// got there first; the pending write is dropped and the next read replaces the local copy with the
    /// authority's. A clear and a tag removal have no single key to compare and are always replayed, in
    /// order: a clear made during an outage removes what others wrote during it too.
    ///
    /// Later writes of a key while one is pending replace it and keep its fingerprint; a clear drops every
    /// write pending before it. Replays run before the next call that reaches the authority (a read or a
    /// write), one replay at a time, and stop at the first failure, keeping what is left. Load fills and
    /// write-backs are never pending: they only copy what a tier already held.
    ///
    /// A plain value; `Sendable`.
    public struct Replay: Sendable {
        /// Where pending writes are kept.
        public let journal: any PendingWriteJournal<Key>
        /// A fingerprint of an entry that is stable across processes and machines (never `hashValue`,
        /// which is seeded per process) and differs when what a reader sees differs.
        public let fingerprint: @Sendable (CacheEntry<Value>) -> UInt64

        /// Creates a replay setting.
        ///
        /// - Parameters:
        ///   - journal: Where pending writes are kept; one that outlives the process replays what an earlier
        ///     process could not.
        ///   - fingerprint: A stable fingerprint of an entry (see ``fingerprint``).
        public init(
            journal: any PendingWriteJournal<Key>, fingerprint: @escaping @Sendable (CacheEntry<Value>) -> UInt64
        ) {
            self.journal = journal
            self.fingerprint = fingerprint
        }
    }
}

extension MultiCache.Authority.Replay where Value == Data {
    /// Creates a replay setting whose fingerprint is the 64-bit FNV-1a hash of the value's bytes and the
    /// entry's tags (sorted, each ended by a zero byte). Expiry instants are left out: tiers keep them at
    /// different precisions, so the same entry could otherwise fingerprint two ways.
    ///
    /// - Parameter journal: Where pending writes are kept.
    public init(journal: any PendingWriteJournal<Key>) {
        self.init(journal: journal) { entry in
            var hash = FNV1a()
            hash.add(entry.value)
            hash.add([0xFF])
            for tag in entry.tags.sorted() {
                hash.add(Array(tag.utf8))
                hash.add([0])
            }
            return hash.value
        }
    }
}

/// The 64-bit FNV-1a hash (Fowler, Noll, Vo; IETF draft-eastlake-fnv): stable across processes, not
/// cryptographic, enough to tell apart the entries one key holds over time.
struct FNV1a {
    private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

    mutating func add<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        for byte in bytes {
            value ^= UInt64(byte)
            value &*= 0x0000_0100_0000_01B3
        }
    }
}

/// Whether a replay may be needed, and the one running.
struct ReplayGate {
    /// Unknown at first (a journal may hold an earlier process's writes), then set whenever a write is
    /// kept as pending or a replay stops early.
    var mayHavePending = true
    /// The replay under way; its result tells whether every pending write was replayed or dropped.
    var running: Task<Bool, Never>?
}

extension MultiCache {
    /// Replays the pending writes, if there may be any, before a call reaches the authority; a call that
    /// arrives while a replay runs waits for it, so no read judges a key by an authority that has not yet
    /// received its pending write.
    ///
    /// - Returns: Whether nothing is left pending; `false` when the replay stopped early, and the authority's
    ///   answers must not be judged yet (a miss there could remove the only copy of a pending write).
    @discardableResult
    func replayPendingWritesIfNeeded() async -> Bool {
        guard let replay = authority?.replay else { return true }
        let task: Task<Bool, Never>? = replayGate.withLock { gate in
            if let running = gate.running { return running }
            guard gate.mayHavePending else { return nil }
            gate.mayHavePending = false
            let task = Task { await self.replayJournal(replay) }
            gate.running = task
            return task
        }
        guard let task else { return true }
        let completed = await task.value
        replayGate.withLock { gate in
            if gate.running == task { gate.running = nil }
        }
        return completed
    }

    /// Replays the journal's writes in order, until the first failure; removes the ones replayed or
    /// superseded from the journal.
    ///
    /// - Returns: Whether every pending write was replayed or dropped.
    private func replayJournal(_ replay: Authority.Replay) async -> Bool {
        let pending: [PendingWrite<Key>]
        do {
            pending = try await replay.journal.update { $0 }
        } catch {
            replayStopped(error, "reading the pending writes failed")
            return false
        }
        var completed = true
        let authorityIndex = tiers.count - 1
        let authority = tiers[authorityIndex]
        var finished = Set<UInt64>()
        for write in pending {
            do {
                switch write.operation {
                case .removeAll:
                    try await authority.handle.removeAll()
                case .removeAllTagged(let tag):
                    try await authority.handle.removeAllTagged(tag)
                case .set(let key), .remove(let key):
                    let current = try await authority.handle.entry(key)
                    guard current.map(replay.fingerprint) == write.base else {
                        // Another writer reached the authority after the entry this write was based on.
                        observer?(
                            CacheEvent(
                                .pendingWriteReplayed,
                                "a pending write was dropped: the authoritative tier holds a newer write of the key",
                                tierIndex: authorityIndex))
                        finished.insert(write.id)
                        continue
                    }
                    if case .set = write.operation {
                        if let local = await firstLocalEntry(forKey: key) {
                            try await authority.handle.setEntry(authority.capping(local, now: clock.now), key)
                        }
                    } else {
                        try await authority.handle.removeEntry(key)
                    }
                }
                finished.insert(write.id)
                observer?(
                    CacheEvent(.pendingWriteReplayed, "a pending write was replayed", tierIndex: authorityIndex))
            } catch {
                replayStopped(error, "replaying a pending write failed; it stays pending")
                completed = false
                break
            }
        }
        guard !finished.isEmpty else { return completed }
        let done = finished
        do {
            try await replay.journal.update { writes in writes.removeAll { done.contains($0.id) } }
        } catch {
            replayStopped(error, "removing replayed writes from the journal failed")
            return false
        }
        return completed
    }

    private func replayStopped(_ error: any Error, _ message: String) {
        replayGate.withLock { $0.mayHavePending = true }
        observer?(CacheEvent(.pendingWriteReplayed, message, tierIndex: tiers.count - 1, error: error))
    }

    /// The first live entry of `key` in the local tiers; a tier that throws counts as a miss.
    private func firstLocalEntry(forKey key: Key) async -> CacheEntry<Value>? {
        for index in 0..<(tiers.count - 1) {
            if let found = try? await tiers[index].handle.entry(key) { return found }
        }
        return nil
    }

    /// The fingerprint a pending write of `key` would remember: that of the local tiers' entry, or `nil`
    /// for none. Read only when the cache replays pending writes.
    func pendingBase(forKey key: Key) async -> UInt64? {
        guard let replay = authority?.replay else { return nil }
        return await firstLocalEntry(forKey: key).map(replay.fingerprint)
    }

    /// Keeps `operation` as pending when the authority's failure is among `failures` (not a refusal by size,
    /// not a cancellation) and the cache replays; returns the failures left to report.
    func keepPending(
        _ operation: PendingWrite<Key>.Operation, base: UInt64?, failures: [CacheError.TierFailure]
    ) async -> [CacheError.TierFailure] {
        let authorityIndex = tiers.count - 1
        guard let replay = authority?.replay,
            let failure = failures.first(where: { $0.index == authorityIndex }),
            !failure.isRefusedBySize, !(failure.error is CancellationError)
        else { return failures }
        do {
            try await replay.journal.update { writes in
                var base = base
                switch operation {
                case .removeAll:
                    writes.removeAll()
                case .set(let key), .remove(let key):
                    if let earlier = writes.firstIndex(where: { $0.key == key }) {
                        base = writes[earlier].base
                        writes.remove(at: earlier)
                    }
                case .removeAllTagged:
                    break
                }
                writes.append(PendingWrite(operation: operation, base: base))
            }
        } catch {
            return failures
        }
        replayGate.withLock { $0.mayHavePending = true }
        observer?(
            CacheEvent(
                .writePending,
                "the authoritative tier \(authorityIndex) (\(failure.name)) missed a write; it is kept as pending",
                tierIndex: authorityIndex, error: failure.error))
        return failures.filter { $0.index != authorityIndex }
    }
}

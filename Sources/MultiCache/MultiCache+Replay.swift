import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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
    /// Counts writes kept as pending: a replay that began before the count moved may have missed one.
    var generation: UInt64 = 0
    /// The replay under way (its id, the generation it began at, and its task, whose result tells
    /// whether every write it claimed was replayed or dropped).
    var running: (id: UInt64, generation: UInt64, task: Task<Bool, Never>)?
    var lastID: UInt64 = 0
}

/// What a pending write remembers of the entry the local tiers held before it.
struct PendingBase: Sendable {
    var fingerprint: UInt64
    var expiresAt: Date?
}

extension MultiCache {
    /// Replays the pending writes, if there may be any, before a call reaches the authority; a call that
    /// arrives while a replay runs waits for it, and for another one when a write was kept as pending after
    /// it began, so no read judges a key by an authority that has not yet received its pending write.
    ///
    /// - Returns: Whether nothing is left pending; `false` when the replay stopped early, and the authority's
    ///   answers must not be judged yet (a miss there could remove the only copy of a pending write).
    @discardableResult
    func replayPendingWritesIfNeeded() async -> Bool {
        guard let replay = authority?.replay else { return true }
        while true {
            let started: (task: Task<Bool, Never>, generation: UInt64)? = replayGate.withLock { gate in
                if let running = gate.running { return (running.task, running.generation) }
                guard gate.mayHavePending else { return nil }
                gate.mayHavePending = false
                gate.lastID += 1
                let id = gate.lastID
                let task = Task {
                    let completed = await self.replayJournal(replay)
                    self.replayGate.withLock { gate in
                        if gate.running?.id == id { gate.running = nil }
                    }
                    return completed
                }
                gate.running = (id, gate.generation, task)
                return (task, gate.generation)
            }
            guard let started else { return true }
            guard await started.task.value else { return false }
            // A write kept as pending after this replay claimed the journal is not among what it replayed.
            if replayGate.withLock({ $0.generation }) == started.generation { return true }
        }
    }

    /// Claims the journal's writes (takes them out, so no other replay, in this process or another, runs
    /// them too), replays them in order until the first failure, and puts back what is left.
    ///
    /// - Returns: Whether every claimed write was replayed or dropped.
    private func replayJournal(_ replay: Authority.Replay) async -> Bool {
        let claimed: [PendingWrite<Key>]
        do {
            claimed = try await replay.journal.update { writes in
                defer { writes = [] }
                return writes
            }
        } catch {
            // Nothing can be replayed from a journal that cannot be read, and waiting would not fix it:
            // the authority's answers are judged as without a journal, and the failure is reported.
            observer?(
                CacheEvent(
                    .pendingWriteLost, "reading the pending writes failed; the authoritative tier answers reads again",
                    tierIndex: tiers.count - 1, error: error))
            return true
        }
        for (position, write) in claimed.enumerated() {
            do {
                try await replayWrite(write, replay)
            } catch {
                let remaining = Array(claimed[position...])
                replayGate.withLock { $0.mayHavePending = true }
                reportReplay("replaying a pending write failed; it stays pending", error)
                await putBack(remaining, replay)
                return false
            }
        }
        return true
    }

    /// Replays one pending write to the authority, or drops it when the authority holds a newer write of
    /// its key.
    ///
    /// - Throws: What the authority or a local tier threw; the write is then still pending.
    private func replayWrite(_ write: PendingWrite<Key>, _ replay: Authority.Replay) async throws {
        let authorityIndex = tiers.count - 1
        let authority = tiers[authorityIndex]
        switch write.operation {
        case .removeAll:
            try await authority.handle.removeAll()
        case .removeAllTagged(let tag):
            try await authority.handle.removeAllTagged(tag)
        case .set(let key), .remove(let key):
            let current = try await authority.handle.entry(key)
            guard isUnchanged(current, since: write, replay) else {
                observer?(
                    CacheEvent(
                        .pendingWriteReplayed,
                        "a pending write was dropped: the authoritative tier holds a newer write of the key",
                        tierIndex: authorityIndex))
                return
            }
            // The write replaced the base; if its own entry is gone from the local tiers too (expired,
            // evicted, fenced by a tag), the key has no value, and the base must not come back.
            let local = try await firstLocalEntry(forKey: key)
            if case .set = write.operation, let local, self.authority?.storesEntry(local) ?? true {
                do {
                    try await authority.handle.setEntry(authority.capping(local, now: clock.now), key)
                } catch let error as CacheError where error.code == .entryTooLarge {
                    try await authority.handle.removeEntry(key)
                }
            } else {
                try await authority.handle.removeEntry(key)
            }
        }
        observer?(CacheEvent(.pendingWriteReplayed, "a pending write was replayed", tierIndex: authorityIndex))
    }

    /// Whether the authority still holds what `write` was based on: the same entry, or none where there was
    /// none, or none where the base has expired by now (its expiry ran out there; nobody removed it).
    private func isUnchanged(
        _ current: CacheEntry<Value>?, since write: PendingWrite<Key>, _ replay: Authority.Replay
    ) -> Bool {
        guard let current else {
            guard write.base != nil else { return true }
            guard let expiresAt = write.baseExpiresAt else { return false }
            return expiresAt <= clock.now
        }
        return replay.fingerprint(current) == write.base
    }

    /// Puts `remaining` back at the head of the journal, ahead of writes kept since they were claimed; a
    /// later write of one of their keys keeps its place at the end but takes the earlier one's base, as it
    /// would have had the earlier one never left the journal.
    private func putBack(_ remaining: [PendingWrite<Key>], _ replay: Authority.Replay) async {
        do {
            try await replay.journal.update { writes in
                var merged = remaining
                for write in writes {
                    var write = write
                    if let key = write.key, let earlier = merged.firstIndex(where: { $0.key == key }) {
                        write.base = merged[earlier].base
                        write.baseExpiresAt = merged[earlier].baseExpiresAt
                        merged.remove(at: earlier)
                    } else if case .removeAll = write.operation {
                        merged.removeAll()
                    }
                    merged.append(write)
                }
                writes = merged
            }
        } catch {
            observer?(
                CacheEvent(
                    .pendingWriteLost, "putting unreplayed writes back into the journal failed",
                    tierIndex: tiers.count - 1, error: error))
        }
    }

    private func reportReplay(_ message: String, _ error: any Error) {
        observer?(CacheEvent(.pendingWriteReplayed, message, tierIndex: tiers.count - 1, error: error))
    }

    /// The first live entry of `key` in the local tiers.
    ///
    /// - Throws: What a local tier threw: a replay must not take a tier it could not read for one without
    ///   the key.
    private func firstLocalEntry(forKey key: Key) async throws -> CacheEntry<Value>? {
        for index in 0..<(tiers.count - 1) {
            if let found = try await tiers[index].handle.entry(key) { return found }
        }
        return nil
    }

    /// What a pending write of `key` would remember: the fingerprint and expiry of the local tiers'
    /// entry, or `nil` for none (or a local tier that cannot be read). Read only when the cache replays
    /// pending writes.
    func pendingBase(forKey key: Key) async -> PendingBase? {
        guard let replay = authority?.replay else { return nil }
        guard let entry = try? await firstLocalEntry(forKey: key) else { return nil }
        return PendingBase(fingerprint: replay.fingerprint(entry), expiresAt: entry.expiresAt)
    }

    /// Keeps `operation` as pending when the authority's failure is among `failures` (not a refusal by size,
    /// not a lasting failure such as another master key's namespace, not a cancellation) and the cache
    /// replays; returns the failures left to report.
    ///
    /// - Parameters:
    ///   - operation: What the authority missed. A set of an entry the authority cannot hold at all
    ///     (``Authority/storesEntry``) is kept as a removal: its old entry there must go, as it would have
    ///     had the authority answered.
    ///   - entry: The entry of a set, for that check.
    func keepPending(
        _ operation: PendingWrite<Key>.Operation, base: PendingBase?, entry: CacheEntry<Value>? = nil,
        failures: [CacheError.TierFailure]
    ) async -> [CacheError.TierFailure] {
        let authorityIndex = tiers.count - 1
        guard let authority, let replay = authority.replay,
            let failure = failures.first(where: { $0.index == authorityIndex }),
            !failure.isRefusedBySize, !failure.isLasting, !(failure.error is CancellationError)
        else { return failures }
        var operation = operation
        if case .set(let key) = operation, let entry, !authority.storesEntry(entry) {
            operation = .remove(key)
        }
        let kept = operation
        do {
            try await replay.journal.update { writes in
                var write = PendingWrite(operation: kept, base: base?.fingerprint, baseExpiresAt: base?.expiresAt)
                switch kept {
                case .removeAll:
                    writes.removeAll()
                case .set(let key), .remove(let key):
                    if let earlier = writes.firstIndex(where: { $0.key == key }) {
                        write.base = writes[earlier].base
                        write.baseExpiresAt = writes[earlier].baseExpiresAt
                        writes.remove(at: earlier)
                    }
                case .removeAllTagged:
                    break
                }
                writes.append(write)
            }
        } catch {
            observer?(
                CacheEvent(
                    .pendingWriteLost,
                    "the authoritative tier \(authorityIndex) (\(failure.name)) missed a write, and keeping it as "
                        + "pending failed",
                    tierIndex: authorityIndex, error: error))
            return failures
        }
        replayGate.withLock { gate in
            gate.mayHavePending = true
            gate.generation += 1
        }
        observer?(
            CacheEvent(
                .writePending,
                "the authoritative tier \(authorityIndex) (\(failure.name)) missed a write; it is kept as pending",
                tierIndex: authorityIndex, error: failure.error))
        return failures.filter { $0.index != authorityIndex }
    }
}

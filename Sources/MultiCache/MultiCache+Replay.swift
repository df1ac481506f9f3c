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
    /// authority's. The authority holding what one of this cache's own missed writes of the key left there
    /// (a write it applied whose answer was lost) is not newer: the write is replayed. A clear and a tag
    /// removal have no single key to compare and are always replayed, in order: a clear made during an
    /// outage removes what others wrote during it too.
    ///
    /// Later writes of a key while one is pending replace it and keep its fingerprint; a clear drops every
    /// write pending before it. Replays run before the next call that reaches the authority (a read or a
    /// write), one replay at a time across every process sharing the journal (a replay claims the writes it
    /// runs for ``PendingWrite/Claim``'s few seconds, renewed as it goes; calls elsewhere meanwhile are
    /// answered by the local tiers), and stop at the first failure, keeping what is left. Load fills and
    /// write-backs are never pending: they only copy what a tier already held.
    ///
    /// A plain value; `Sendable`.
    public struct Replay: Sendable {
        /// Where pending writes are kept.
        public let journal: any PendingWriteJournal<Key>
        /// A fingerprint of an entry that is stable across processes and machines (never `hashValue`,
        /// which is seeded per process) and differs when what a reader sees differs.
        public let fingerprint: @Sendable (CacheEntry<Value>) -> UInt64
        /// How long a replay's claim on the journal holds without renewal (it renews it after each write it
        /// replays): longer than one write to the authority can take within its deadline, and as long as a
        /// replay whose process died holds other processes' replays and writes back.
        public let claimDuration: Duration

        /// Creates a replay setting.
        ///
        /// - Parameters:
        ///   - journal: Where pending writes are kept; one that outlives the process replays what an earlier
        ///     process could not.
        ///   - claimDuration: How long a replay's claim holds without renewal; 10 seconds unless given. Make it
        ///     several times the authority's longest deadline.
        ///   - fingerprint: A stable fingerprint of an entry (see ``fingerprint``).
        public init(
            journal: any PendingWriteJournal<Key>, claimDuration: Duration = .seconds(10),
            fingerprint: @escaping @Sendable (CacheEntry<Value>) -> UInt64
        ) {
            self.journal = journal
            self.claimDuration = claimDuration
            self.fingerprint = fingerprint
        }

        /// ``claimDuration`` in seconds.
        var claimSeconds: TimeInterval {
            Double(claimDuration.components.seconds) + Double(claimDuration.components.attoseconds) / 1e18
        }
    }
}

extension MultiCache.Authority.Replay where Value == Data {
    /// Creates a replay setting whose fingerprint is the 64-bit FNV-1a hash of the value's bytes and the
    /// entry's tags (sorted, each ended by a zero byte). Expiry instants are left out: tiers keep them at
    /// different precisions, so the same entry could otherwise fingerprint two ways.
    ///
    /// - Parameters:
    ///   - journal: Where pending writes are kept.
    ///   - claimDuration: How long a replay's claim holds without renewal; 10 seconds unless given.
    public init(journal: any PendingWriteJournal<Key>, claimDuration: Duration = .seconds(10)) {
        self.init(journal: journal, claimDuration: claimDuration) { entry in
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
    /// The replay under way (its id, the generation it began at, and its task, whose result tells how it
    /// ended).
    var running: (id: UInt64, generation: UInt64, task: Task<ReplayOutcome, Never>)?
    var lastID: UInt64 = 0
}

/// How a replay of the journal ended.
enum ReplayOutcome: Sendable {
    /// Every write was replayed or dropped, and the journal was found empty.
    case caughtUp
    /// A write could not be replayed (the authority or a local tier failed); it stays pending.
    case stopped
    /// Another replay, most likely in another process, holds the journal: its writes are not in the
    /// authority yet.
    case heldElsewhere
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
    /// - Returns: Whether nothing is left pending; `false` when the replay stopped early or another process's
    ///   replay holds the journal, and the authority's answers must not be judged yet (a miss there could
    ///   remove the only copy of a pending write).
    @discardableResult
    func replayPendingWritesIfNeeded() async -> Bool {
        await replayPendingWrites() == .caughtUp
    }

    /// Before a write: replays the pending writes and, while another process's replay holds the journal,
    /// waits for it (looking again every 50 ms, for at most the replay's ``Authority/Replay/claimDuration``), so
    /// that its replay cannot send an older entry of the key after this write reached the authority.
    func replayPendingWritesBeforeWriting() async {
        guard let replay = authority?.replay else { return }
        let giveUpAt = ContinuousClock.now.advanced(by: replay.claimDuration)
        while await replayPendingWrites() == .heldElsewhere, ContinuousClock.now < giveUpAt {
            do {
                try await Task.sleep(for: .milliseconds(50))
            } catch {
                return
            }
        }
    }

    /// The replay of ``replayPendingWritesIfNeeded()``, with how it ended.
    private func replayPendingWrites() async -> ReplayOutcome {
        guard let replay = authority?.replay else { return .caughtUp }
        while true {
            let started: (task: Task<ReplayOutcome, Never>, generation: UInt64)? = replayGate.withLock { gate in
                if let running = gate.running { return (running.task, running.generation) }
                guard gate.mayHavePending else { return nil }
                gate.mayHavePending = false
                gate.lastID += 1
                let id = gate.lastID
                let task = Task {
                    let outcome = await self.replayJournal(replay)
                    self.replayGate.withLock { gate in
                        if gate.running?.id == id { gate.running = nil }
                    }
                    return outcome
                }
                gate.running = (id, gate.generation, task)
                return (task, gate.generation)
            }
            guard let started else { return .caughtUp }
            let outcome = await started.task.value
            guard outcome == .caughtUp else { return outcome }
            // A write kept as pending after this replay began may have come after its last look at the journal
            // (a replay claims again until it finds the journal empty, which covers all the others).
            if replayGate.withLock({ $0.generation }) == started.generation { return .caughtUp }
        }
    }

    /// Claims the journal's writes (marks them as this replay's, so no other replay, in this process or
    /// another sharing the journal, runs them while it lives), replays them in order until the first
    /// failure, removing each from the journal once replayed and renewing the claim on the rest, and claims
    /// again until nothing is left.
    ///
    /// The writes stay in the journal while they run: a call in another process meanwhile finds them claimed
    /// and does not judge the authority's answers (its reads are served by the local tiers; its writes wait),
    /// where writes taken out of the journal would have let it find the journal empty, read the authority's
    /// older entry and put it over the local copy the replay was about to send. A replay that finds its claim
    /// taken over (it outlived it: a stopped process, a slow link) stops before its next write.
    private func replayJournal(_ replay: Authority.Replay) async -> ReplayOutcome {
        let owner = UInt64.random(in: 1...UInt64.max)
        while true {
            let claimed: [PendingWrite<Key>]?
            do {
                let now = clock.now
                let until = now.addingTimeInterval(replay.claimSeconds)
                claimed = try await replay.journal.update { writes in
                    Self.claim(&writes, owner: owner, now: now, until: until)
                }
            } catch {
                // Nothing can be replayed from a journal that cannot be read, and waiting would not fix it:
                // the authority's answers are judged as without a journal, and the failure is reported.
                observer?(
                    CacheEvent(
                        .pendingWriteLost,
                        "reading the pending writes failed; the authoritative tier answers reads again",
                        tierIndex: tiers.count - 1, error: error))
                return .caughtUp
            }
            guard let claimed else {
                // Another replay (most likely in another process) holds writes: its answers are not in yet.
                replayGate.withLock { $0.mayHavePending = true }
                return .heldElsewhere
            }
            if claimed.isEmpty { return .caughtUp }
            var owned = Set(claimed.map(\.id))
            for write in claimed {
                // Gone from this replay's claim: replaced by a later write of its key, which the next round runs.
                guard owned.contains(write.id) else { continue }
                do {
                    try await replayWrite(write, replay)
                } catch {
                    replayGate.withLock { $0.mayHavePending = true }
                    reportReplay("replaying a pending write failed; it stays pending", error)
                    await releaseClaim(replay, owner: owner)
                    return .stopped
                }
                do {
                    guard let stillOwned = try await settleClaim(replay, owner: owner, replayed: write.id) else {
                        // Another replay took the journal over after this one's claim lapsed: it runs the rest.
                        replayGate.withLock { $0.mayHavePending = true }
                        return .heldElsewhere
                    }
                    owned = stillOwned
                } catch {
                    replayGate.withLock { $0.mayHavePending = true }
                    reportReplay(
                        "updating the pending writes after a replay failed; a write may be replayed again", error)
                    return .stopped
                }
            }
        }
    }

    /// Marks every write of `writes` as `owner`'s until `until` and returns them, or returns `nil` and
    /// changes nothing when another replay's claim is still live at `now`.
    ///
    /// A claim further ahead than ``claimHorizon(_:)`` allows is taken as lapsed: only a clock stepped back
    /// after it was made puts it there, and it would otherwise hold the journal for as long as the step.
    static func claim(
        _ writes: inout [PendingWrite<Key>], owner: UInt64, now: Date, until: Date
    ) -> [PendingWrite<Key>]? {
        if isHeldElsewhere(writes, owner: owner, now: now, horizon: claimHorizon(until.timeIntervalSince(now))) {
            return nil
        }
        for index in writes.indices { writes[index].claim = .init(owner: owner, expiresAt: until) }
        return writes
    }

    /// How far ahead a live claim may lie when claims last `duration` seconds: ten times that, at least ten
    /// minutes (a replay elsewhere may be configured with a longer duration).
    static func claimHorizon(_ duration: TimeInterval) -> TimeInterval {
        max(10 * duration, 600)
    }

    /// Whether a replay other than `owner`'s holds a live claim on any of `writes` at `now`.
    static func isHeldElsewhere(
        _ writes: [PendingWrite<Key>], owner: UInt64, now: Date, horizon: TimeInterval
    ) -> Bool {
        writes.contains { write in
            guard let claim = write.claim, claim.owner != owner else { return false }
            return claim.expiresAt > now && claim.expiresAt.timeIntervalSince(now) <= horizon
        }
    }

    /// Removes the replayed write `replayed` from the journal and renews `owner`'s claim on the rest.
    ///
    /// - Returns: The writes `owner` still holds, or `nil` when another replay holds a live claim (it took the
    ///   journal over after `owner`'s claim lapsed).
    /// - Throws: What the journal throws; the write then stays, claimed until the claim lapses, and a later
    ///   replay runs it again (its base check then finds this replay's write, or the one it replaced).
    private func settleClaim(
        _ replay: Authority.Replay, owner: UInt64, replayed: UInt64
    ) async throws -> Set<UInt64>? {
        let now = clock.now
        let until = now.addingTimeInterval(replay.claimSeconds)
        let horizon = Self.claimHorizon(replay.claimSeconds)
        return try await replay.journal.update { writes in
            writes.removeAll { $0.id == replayed }
            if Self.isHeldElsewhere(writes, owner: owner, now: now, horizon: horizon) { return nil }
            var owned: Set<UInt64> = []
            for index in writes.indices where writes[index].claim?.owner == owner {
                writes[index].claim = .init(owner: owner, expiresAt: until)
                owned.insert(writes[index].id)
            }
            return owned
        }
    }

    /// Releases `owner`'s claim, so that the next replay need not wait for it to lapse. Best effort: a
    /// journal that fails here leaves the claim to lapse.
    private func releaseClaim(_ replay: Authority.Replay, owner: UInt64) async {
        do {
            try await replay.journal.update { writes in
                for index in writes.indices where writes[index].claim?.owner == owner {
                    writes[index].claim = nil
                }
            }
        } catch {
            reportReplay("releasing the claim on the pending writes failed; it lapses by itself", error)
        }
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

    /// Whether the authority holds nothing newer than `write`: what it was based on (the same entry, or none
    /// where there was none, or none where the base has expired by now: its expiry ran out there, nobody
    /// removed it), or what one of this cache's own missed writes of the key put there after all (an entry
    /// it stored, or nothing after a removal).
    private func isUnchanged(
        _ current: CacheEntry<Value>?, since write: PendingWrite<Key>, _ replay: Authority.Replay
    ) -> Bool {
        guard let current else {
            guard write.base != nil, !write.includesRemoval else { return true }
            guard let expiresAt = write.baseExpiresAt else { return false }
            return expiresAt <= clock.now
        }
        let fingerprint = replay.fingerprint(current)
        return fingerprint == write.base || write.writtenFingerprints.contains(fingerprint)
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
        let kept: PendingWrite<Key>.Operation =
            if case .set(let key) = operation, let entry, !authority.storesEntry(entry) {
                .remove(key)
            } else {
                operation
            }
        // What this write leaves in the authority should it land after all (its answer lost, say): kept, so a
        // replay can tell the cache's own write there from another writer's.
        // Only a write whose request may have reached the authority can have landed: one that missed its
        // deadline (or failed in a way this cache cannot tell). One refused before it was sent (no connection,
        // an open breaker: `unavailable`) did not, and taking it for landed would make another writer's later
        // removal, or an equal value, read as this cache's own.
        let mayHaveLanded =
            (failure.error as? CacheError).map { $0.code == .deadlineExceeded } ?? true
        var written: [UInt64] = []
        var removes = false
        switch operation {
        case .set:
            // A set kept as a removal never reached the authority as a set (it cannot hold the entry).
            if mayHaveLanded, let entry, case .set = kept { written = [replay.fingerprint(entry)] }
        case .remove:
            removes = mayHaveLanded
        case .removeAll, .removeAllTagged:
            break
        }
        let landed = (fingerprints: written, removes: removes)
        do {
            try await replay.journal.update { writes in
                var write = PendingWrite(
                    operation: kept, base: base?.fingerprint, baseExpiresAt: base?.expiresAt,
                    writtenFingerprints: landed.fingerprints, includesRemoval: landed.removes)
                switch kept {
                case .removeAll:
                    writes.removeAll()
                case .set(let key), .remove(let key):
                    if let earlier = writes.firstIndex(where: { $0.key == key }) {
                        write.base = writes[earlier].base
                        write.baseExpiresAt = writes[earlier].baseExpiresAt
                        write.writtenFingerprints = Array(
                            (writes[earlier].writtenFingerprints + landed.fingerprints)
                                .suffix(PendingWrite<Key>.writtenFingerprintLimit))
                        write.includesRemoval = writes[earlier].includesRemoval || landed.removes
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

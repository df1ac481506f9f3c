import CacheCore
import CacheTesting
import Foundation
import Testing

@testable import MultiCache

/// Writes the authoritative tier misses are kept as pending and replayed when it answers again, unless it
/// holds a newer write of the key by then (`MultiCache.Authority.Replay`).
@Suite struct MultiCacheReplayTests {
    /// Two tiers whose last is the authority, replaying through an in-memory journal.
    private func makeTiers(observer: CacheObserver? = nil) throws -> (TwoTiers, InMemoryPendingWriteJournal<String>) {
        let journal = InMemoryPendingWriteJournal<String>()
        let tiers = try TwoTiers(observer: observer, authority: .init(replay: .init(journal: journal)))
        return (tiers, journal)
    }

    private func startOutage(_ tiers: TwoTiers) {
        for operation in [CacheOperation.entry, .setEntry, .removeEntry, .removeAll] {
            tiers.slow.failAlways(operation, with: CacheError(.unavailable, "outage"))
        }
    }

    private func endOutage(_ tiers: TwoTiers) {
        for operation in [CacheOperation.entry, .setEntry, .removeEntry, .removeAll] {
            tiers.slow.stopFailing(operation)
        }
    }

    @Test func aWriteMadeDuringAnOutageIsReplayedWhenTheAuthorityAnswers() async throws {
        // Given a write while the authority is out of reach
        let events = EventLog()
        let (tiers, journal) = try makeTiers(observer: events.observer)
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("offline"), forKey: "k", expiry: .seconds(3_600))

        // Then it did not fail, it is pending, and the local tier serves it meanwhile
        #expect(journal.pendingWrites.map(\.operation) == [.set("k")])
        #expect(events.all.contains { $0.kind == .writePending })
        #expect(try await tiers.cache.value(forKey: "k") == bytes("offline"))

        // When the authority answers again, the next read replays it before judging the key
        endOutage(tiers)
        let value = try await tiers.cache.value(forKey: "k")

        // Then the write reached the authority and nothing is pending
        #expect(value == bytes("offline"))
        #expect(try await tiers.slow.value(forKey: "k") == bytes("offline"))
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func aNewerWriteInTheAuthorityWinsOverAPendingOne() async throws {
        // Given a key both tiers hold, then an outage in which this cache writes it
        let (tiers, journal) = try makeTiers()
        try await tiers.cache.setValue(bytes("v0"), forKey: "k", expiry: .seconds(3_600))
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("mine"), forKey: "k", expiry: .seconds(3_600))
        // And another writer reaches the authority before this cache does
        endOutage(tiers)
        try await tiers.slow.setValue(bytes("theirs"), forKey: "k", expiry: .seconds(3_600))

        // When the key is read
        let value = try await tiers.cache.value(forKey: "k")

        // Then the other writer's value stands everywhere and the pending write is dropped
        #expect(value == bytes("theirs"))
        #expect(try await tiers.slow.value(forKey: "k") == bytes("theirs"))
        #expect(try await tiers.fast.value(forKey: "k") == bytes("theirs"))
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func anUnchangedAuthorityTakesThePendingWriteOverItsOldEntry() async throws {
        // Given a key both tiers hold, overwritten here during an outage
        let (tiers, journal) = try makeTiers()
        try await tiers.cache.setValue(bytes("v0"), forKey: "k", expiry: .seconds(3_600))
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("v1"), forKey: "k", expiry: .seconds(3_600))
        try await tiers.cache.setValue(bytes("v2"), forKey: "k", expiry: .seconds(3_600))
        // Two writes of one key are one pending write, based on what the authority held before the first
        #expect(journal.pendingWrites.count == 1)

        // When the authority answers again (still holding v0)
        endOutage(tiers)
        _ = try await tiers.cache.value(forKey: "other")

        // Then the last write replaced v0 there
        #expect(try await tiers.slow.value(forKey: "k") == bytes("v2"))
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func aRemovalMadeDuringAnOutageIsReplayed() async throws {
        let (tiers, journal) = try makeTiers()
        try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .seconds(3_600))
        startOutage(tiers)
        try await tiers.cache.removeEntry(forKey: "k")
        #expect(journal.pendingWrites.map(\.operation) == [.remove("k")])

        endOutage(tiers)
        #expect(try await tiers.cache.value(forKey: "k") == nil)
        #expect(try await tiers.slow.value(forKey: "k") == nil)
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func aClearMadeDuringAnOutageIsReplayedBeforeLaterWrites() async throws {
        // Given two keys in both tiers, then during an outage a write, a clear and another write
        let (tiers, journal) = try makeTiers()
        try await tiers.cache.setValue(bytes("a"), forKey: "a", expiry: .seconds(3_600))
        try await tiers.cache.setValue(bytes("b"), forKey: "b", expiry: .seconds(3_600))
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("a2"), forKey: "a", expiry: .seconds(3_600))
        try await tiers.cache.removeAll()
        try await tiers.cache.setValue(bytes("c"), forKey: "c", expiry: .seconds(3_600))
        // The clear drops what was pending before it
        #expect(journal.pendingWrites.map(\.operation) == [.removeAll, .set("c")])

        // When the authority answers again
        endOutage(tiers)
        _ = try await tiers.cache.value(forKey: "c")

        // Then it was cleared, and holds the write made after the clear
        #expect(try await tiers.slow.value(forKey: "a") == nil)
        #expect(try await tiers.slow.value(forKey: "b") == nil)
        #expect(try await tiers.slow.value(forKey: "c") == bytes("c"))
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func aWriteBeforeTheReplayReachesTheAuthorityAfterIt() async throws {
        // Given a pending write, and the authority back
        let (tiers, journal) = try makeTiers()
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("old"), forKey: "k", expiry: .seconds(3_600))
        endOutage(tiers)

        // When the next call is a write of the same key
        try await tiers.cache.setValue(bytes("new"), forKey: "k", expiry: .seconds(3_600))

        // Then the replay ran first, so the new write is what the authority holds
        #expect(try await tiers.slow.value(forKey: "k") == bytes("new"))
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func aReplayThatFailsKeepsTheWriteForLater() async throws {
        let (tiers, journal) = try makeTiers()
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .seconds(3_600))
        // The authority answers reads again but still refuses writes: the replay stops, and the read is
        // answered by the local tier, whose copy is the only one of the write (the authority's miss must
        // not remove it)
        tiers.slow.stopFailing(.entry)
        #expect(try await tiers.cache.value(forKey: "k") == bytes("v"))
        #expect(try await tiers.fast.value(forKey: "k") == bytes("v"))
        #expect(journal.pendingWrites.count == 1)
        // And once it takes writes, the next call replays it
        endOutage(tiers)
        _ = try await tiers.cache.value(forKey: "k")
        #expect(try await tiers.slow.value(forKey: "k") == bytes("v"))
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func aWriteTheAuthorityRefusesBySizeIsNotPending() async throws {
        let (tiers, journal) = try makeTiers()
        tiers.slow.failNext(.setEntry, with: CacheError(.entryTooLarge, "too large"))
        // A refusal by size is the tier's rule, reported as ever, and nothing a replay could fix
        await #expect(throws: CacheError.self) {
            try await tiers.cache.setValue(bytes("large"), forKey: "k", expiry: .seconds(3_600))
        }
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test(arguments: [CacheError.Code.wrongMasterKey, .unsupportedServer, .permissionDenied])
    func aWriteTheAuthorityRefusesForGoodIsNotPending(_ code: CacheError.Code) async throws {
        // A namespace of another master key (say) refuses every replay too: kept, it would stay pending on
        // every run. It fails as it would without a journal.
        let (tiers, journal) = try makeTiers()
        tiers.slow.failNext(.setEntry, with: CacheError(code, "refused"))
        let thrown = await #expect(throws: CacheError.self) {
            try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .seconds(3_600))
        }
        #expect(thrown?.tierFailures.map(\.index) == [1])
        #expect(journal.pendingWrites.isEmpty)
        // while an outage's failure of the same write is kept
        tiers.slow.failNext(.setEntry, with: CacheError(.deadlineExceeded, "late"))
        try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .seconds(3_600))
        #expect(journal.pendingWrites.count == 1)
    }

    @Test func withoutReplayAMissedWriteStillFails() async throws {
        let tiers = try TwoTiers(authority: .init())
        tiers.slow.failAlways(.setEntry)
        await #expect(throws: CacheError.self) {
            try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .seconds(3_600))
        }
    }

    @Test func aPendingSetWhoseLocalEntryExpiredRemovesTheOldEntryInsteadOfKeepingIt() async throws {
        // Given v0 in both tiers, replaced during an outage by v1 with a short lifetime
        let (tiers, journal) = try makeTiers()
        try await tiers.cache.setValue(bytes("v0"), forKey: "k", expiry: .seconds(3_600))
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("v1"), forKey: "k", expiry: .seconds(2))
        // When v1 expires before the authority answers again
        tiers.clock.advance(by: 3)
        endOutage(tiers)

        // Then v0 does not come back: the key has no value anywhere
        #expect(try await tiers.cache.value(forKey: "k") == nil)
        #expect(try await tiers.slow.value(forKey: "k") == nil)
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func aLocalTierThatCannotBeReadStopsTheReplayAndKeepsTheWrite() async throws {
        let (tiers, journal) = try makeTiers()
        try await tiers.cache.setValue(bytes("old"), forKey: "k", expiry: .seconds(3_600))
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("new"), forKey: "k", expiry: .seconds(3_600))
        endOutage(tiers)
        // The replay's read of the local copy fails once: the write must stay pending, not be taken as gone
        tiers.fast.failNext(.entry)
        _ = try await tiers.cache.value(forKey: "other")
        #expect(journal.pendingWrites.map(\.operation) == [.set("k")])
        // And the next call replays it
        #expect(try await tiers.cache.value(forKey: "k") == bytes("new"))
        #expect(try await tiers.slow.value(forKey: "k") == bytes("new"))
    }

    @Test func aSetTheAuthorityCouldNeverHoldIsKeptAsARemovalOfItsOldEntry() async throws {
        // Given an authority that holds nothing over 4 bytes, and a small value in both tiers
        let journal = InMemoryPendingWriteJournal<String>()
        let tiers = try TwoTiers(
            authority: .init(storesEntry: { $0.value.count <= 4 }, replay: .init(journal: journal)))
        try await tiers.cache.setValue(bytes("tiny"), forKey: "k", expiry: .seconds(3_600))
        // When a large value replaces it during an outage
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("too large"), forKey: "k", expiry: .seconds(3_600))
        #expect(journal.pendingWrites.map(\.operation) == [.remove("k")])
        endOutage(tiers)

        // Then the old small value leaves the authority, the large one is served locally, nothing is stuck
        #expect(try await tiers.cache.value(forKey: "k") == bytes("too large"))
        #expect(try await tiers.slow.value(forKey: "k") == nil)
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func aWriteWhoseBaseExpiredInTheAuthorityIsStillReplayed() async throws {
        // Given v0 with a short lifetime in both tiers, replaced during an outage by a lasting v1
        let (tiers, journal) = try makeTiers()
        try await tiers.cache.setValue(bytes("v0"), forKey: "k", expiry: .seconds(3))
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("v1"), forKey: "k", expiry: .seconds(3_600))
        // When v0 has expired in the authority by the time it answers (its expiry, nobody's removal)
        tiers.clock.advance(by: 4)
        endOutage(tiers)

        // Then v1 is replayed, not dropped as if a newer removal had happened
        #expect(try await tiers.cache.value(forKey: "k") == bytes("v1"))
        #expect(try await tiers.slow.value(forKey: "k") == bytes("v1"))
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func aJournalThatCannotBeReadNoLongerKeepsReadsFromTheAuthority() async throws {
        let events = EventLog()
        let journal = FailingJournal()
        let tiers = try TwoTiers(observer: events.observer, authority: .init(replay: .init(journal: journal)))
        try await tiers.slow.setValue(bytes("remote"), forKey: "k", expiry: .seconds(3_600))
        try await tiers.fast.setValue(bytes("stale"), forKey: "k", expiry: .seconds(3_600))
        // The authority's answer wins even though the journal fails, and the failure is reported
        #expect(try await tiers.cache.value(forKey: "k") == bytes("remote"))
        #expect(events.all.contains { $0.kind == .pendingWriteLost })
        // A write the authority misses, which cannot be kept either, fails loudly
        tiers.slow.failNext(.setEntry)
        await #expect(throws: CacheError.self) {
            try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .seconds(3_600))
        }
        #expect(events.all.filter { $0.kind == .pendingWriteLost }.count == 2)
    }

    @Test func aReplayClaimsItsWritesSoNoOtherReplayRunsThemToo() async throws {
        // Given a pending clear, and the authority back but held in the replay's first call
        let (tiers, journal) = try makeTiers()
        try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .seconds(3_600))
        startOutage(tiers)
        try await tiers.cache.removeAll()
        endOutage(tiers)
        tiers.slow.hold(.removeAll)
        let replaying = Task { try await tiers.cache.value(forKey: "z") }
        await tiers.slow.waitUntilHeld(.removeAll)

        // Then while it runs, the clear stays in the journal, claimed by that replay until a few seconds on
        let claim = try #require(journal.pendingWrites.first?.claim)
        #expect(journal.pendingWrites.map(\.operation) == [.removeAll])
        #expect(claim.expiresAt > tiers.clock.now)
        var writes = journal.pendingWrites
        let stranger = claim.owner &+ 1
        let later = tiers.clock.now.addingTimeInterval(10)
        #expect(MultiCache<String, Data>.claim(&writes, owner: stranger, now: tiers.clock.now, until: later) == nil)
        tiers.slow.release(.removeAll)
        _ = try await replaying.value
        #expect(tiers.slow.callCount(.removeAll) == 2)  // the outage's failed call, then the replay
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func anotherProcessDoesNotJudgeTheAuthorityWhileAReplayRuns() async throws {
        // Given a key both tiers hold, changed during an outage, so a set of it is pending
        let (tiers, journal) = try makeTiers()
        try await tiers.cache.setValue(bytes("x0"), forKey: "x", expiry: .seconds(3_600))
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("x1"), forKey: "x", expiry: .seconds(3_600))
        endOutage(tiers)
        // And a second cache over the same tiers and journal: another process on the same store
        let other = try MultiCache<String, Data>(
            tiers: [.init(tiers.fast, name: "memory"), .init(tiers.slow, name: "disk")],
            authority: .init(replay: .init(journal: journal)))

        // When the first cache's replay is about to send the write, and the other process reads the key
        tiers.slow.hold(.setEntry)
        let replaying = Task { try await tiers.cache.value(forKey: "z") }
        await tiers.slow.waitUntilHeld(.setEntry)
        let seenMeanwhile = try await other.value(forKey: "x")

        // Then it is served the pending write from the local tier, which it leaves alone (judged by the
        // authority it would get "x0" and write it over the local copy the replay then sends)
        #expect(seenMeanwhile == bytes("x1"))
        tiers.slow.release(.setEntry)
        _ = try await replaying.value
        #expect(try await tiers.slow.value(forKey: "x") == bytes("x1"))
        #expect(try await other.value(forKey: "x") == bytes("x1"))
        #expect(journal.pendingWrites.isEmpty)
    }

    /// A second cache over the tiers and journal of `tiers`, whose authority is wrapped so that a test can hold
    /// its calls alone: another process on the same store.
    private func anotherProcess(
        _ tiers: TwoTiers, _ journal: InMemoryPendingWriteJournal<String>
    ) throws -> (MultiCache<String, Data>, FaultInjectingCache<String, Data>) {
        let authority = FaultInjectingCache<String, Data>(wrapping: tiers.slow)
        let cache = try MultiCache<String, Data>(
            tiers: [.init(tiers.fast, name: "memory"), .init(authority, name: "disk")],
            authority: .init(replay: .init(journal: journal)))
        return (cache, authority)
    }

    @Test func aReplayThatOutlivedItsClaimStopsWhereAnotherTookTheJournalOver() async throws {
        // Given a pending clear and a pending set, and another process's replay held in the clear's call (a
        // slow link, a stopped process) past its claim's 10 seconds
        let (tiers, journal) = try makeTiers()
        let (stalled, stalledAuthority) = try anotherProcess(tiers, journal)
        startOutage(tiers)
        try await stalled.removeAll()
        try await stalled.setValue(bytes("later"), forKey: "later", expiry: .seconds(3_600))
        endOutage(tiers)
        stalledAuthority.hold(.removeAll)
        let stalledReplay = Task { try await stalled.value(forKey: "z") }
        await stalledAuthority.waitUntilHeld(.removeAll)
        let stalledSets = stalledAuthority.callCount(.setEntry)
        tiers.clock.advance(by: .seconds(11))
        // When this process takes the journal over and is replaying the set
        tiers.slow.hold(.setEntry)
        let replay = Task { try await tiers.cache.value(forKey: "z") }
        await tiers.slow.waitUntilHeld(.setEntry)
        // And the stalled replay's clear comes back
        stalledAuthority.release(.removeAll)
        try await Task.sleep(for: .milliseconds(100))
        tiers.slow.release(.setEntry)
        _ = try await replay.value
        _ = try await stalledReplay.value

        // Then the stalled replay stopped there: it found its claim taken over and did not send the set too
        #expect(stalledAuthority.callCount(.setEntry) == stalledSets)
        #expect(try await tiers.slow.value(forKey: "later") == bytes("later"))
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func aWriteWaitsForAnotherProcesssReplaySoItsOlderEntryCannotLandAfterIt() async throws {
        // Given a key both tiers hold, changed during an outage, and another process replaying that change,
        // held just before it sends it
        let (tiers, journal) = try makeTiers()
        let (replayer, replayerAuthority) = try anotherProcess(tiers, journal)
        try await replayer.setValue(bytes("x0"), forKey: "x", expiry: .seconds(3_600))
        startOutage(tiers)
        try await replayer.setValue(bytes("x1"), forKey: "x", expiry: .seconds(3_600))
        endOutage(tiers)
        replayerAuthority.hold(.setEntry)
        let replaying = Task { try await replayer.value(forKey: "z") }
        await replayerAuthority.waitUntilHeld(.setEntry)

        // When this process writes the key meanwhile
        let write = Task { try await tiers.cache.setValue(bytes("x2"), forKey: "x", expiry: .seconds(3_600)) }
        try await Task.sleep(for: .milliseconds(200))
        // Then the write waits for the replay (nothing of it reached the authority yet)
        #expect(try await tiers.slow.value(forKey: "x") == bytes("x0"))
        replayerAuthority.release(.setEntry)
        _ = try await replaying.value
        try await write.value
        // And lands after it: the last acknowledged write is what both processes read
        #expect(try await tiers.slow.value(forKey: "x") == bytes("x2"))
        #expect(try await tiers.cache.value(forKey: "x") == bytes("x2"))
        #expect(try await replayer.value(forKey: "x") == bytes("x2"))
    }

    @Test func aRemovalRefusedBeforeItWasSentIsNotTakenForOneThatLanded() async throws {
        // Given a key both tiers hold, removed and then set again while the authority refused connections
        let (tiers, _) = try makeTiers()
        try await tiers.cache.setValue(bytes("v0"), forKey: "k", expiry: .seconds(3_600))
        startOutage(tiers)
        try await tiers.cache.removeEntry(forKey: "k")
        try await tiers.cache.setValue(bytes("mine"), forKey: "k", expiry: .seconds(3_600))
        endOutage(tiers)
        // When another writer removes the key after the outage (the newest write)
        try await tiers.slow.removeEntry(forKey: "k")

        // Then its removal wins: the removal this cache missed never reached the authority, so holding nothing
        // there is not this cache's own doing
        #expect(try await tiers.cache.value(forKey: "k") == nil)
    }

    @Test func aClaimFarBeyondAnyDurationIsTakenForAClockSteppedBack() async throws {
        // Given a pending write claimed until an instant no claim made now could reach
        let (tiers, journal) = try makeTiers()
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .seconds(3_600))
        endOutage(tiers)
        let farAhead = tiers.clock.now.addingTimeInterval(86_400)
        try await journal.update { writes in writes[0].claim = .init(owner: 7, expiresAt: farAhead) }
        // Then the next read replays it rather than waiting a day
        #expect(try await tiers.cache.value(forKey: "k") == bytes("v"))
        #expect(try await tiers.slow.value(forKey: "k") == bytes("v"))
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func aClaimWhoseReplayDiedLapsesAndTheWritesAreReplayedByAnother() async throws {
        // Given a pending write claimed by a replay that never finished (its process was killed)
        let (tiers, journal) = try makeTiers()
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .seconds(3_600))
        endOutage(tiers)
        let lapsed = tiers.clock.now.addingTimeInterval(-1)
        try await journal.update { writes in writes[0].claim = .init(owner: 7, expiresAt: lapsed) }
        let other = try MultiCache<String, Data>(
            tiers: [.init(tiers.fast, name: "memory"), .init(tiers.slow, name: "disk")],
            authority: .init(replay: .init(journal: journal)))

        // When another cache reads once the claim has lapsed
        #expect(try await other.value(forKey: "k") == bytes("v"))

        // Then it replayed the write
        #expect(try await tiers.slow.value(forKey: "k") == bytes("v"))
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func aLiveClaimOfAnotherReplayKeepsReadsLocal() async throws {
        // Given a pending write claimed by another process's replay that is still running
        let (tiers, journal) = try makeTiers()
        try await tiers.cache.setValue(bytes("v0"), forKey: "k", expiry: .seconds(3_600))
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("v1"), forKey: "k", expiry: .seconds(3_600))
        endOutage(tiers)
        let until = tiers.clock.now.addingTimeInterval(5)
        try await journal.update { writes in writes[0].claim = .init(owner: 7, expiresAt: until) }

        // Then a read is served locally and replays nothing, until the claim lapses
        #expect(try await tiers.cache.value(forKey: "k") == bytes("v1"))
        #expect(try await tiers.slow.value(forKey: "k") == bytes("v0"))
        #expect(journal.pendingWrites.count == 1)
        tiers.clock.advance(by: .seconds(6))
        #expect(try await tiers.cache.value(forKey: "k") == bytes("v1"))
        #expect(try await tiers.slow.value(forKey: "k") == bytes("v1"))
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func aMissedWriteThatLandedAfterAllIsNotTakenForANewerOne() async throws {
        // Given a key both tiers hold, and a set of it whose answer was lost although the authority applied it
        let (tiers, journal) = try makeTiers()
        try await tiers.cache.setValue(bytes("q0"), forKey: "q", expiry: .seconds(3_600))
        tiers.slow.failNext(.setEntry, with: CacheError(.deadlineExceeded, "no reply within the read deadline"))
        try await tiers.cache.setValue(bytes("q1"), forKey: "q", expiry: .seconds(3_600))
        try await tiers.slow.setValue(bytes("q1"), forKey: "q", expiry: .seconds(3_600))  // it landed
        // And two more sets of it during an outage
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("q2"), forKey: "q", expiry: .seconds(3_600))
        try await tiers.cache.setValue(bytes("q3"), forKey: "q", expiry: .seconds(3_600))
        endOutage(tiers)

        // Then the authority's "q1" is this cache's own write: the last one is replayed over it
        #expect(try await tiers.cache.value(forKey: "q") == bytes("q3"))
        #expect(try await tiers.slow.value(forKey: "q") == bytes("q3"))
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func aMissedRemovalThatLandedAfterAllIsNotTakenForANewerOne() async throws {
        // Given a key both tiers hold, and a removal of it whose answer was lost although the authority applied it
        let (tiers, journal) = try makeTiers()
        try await tiers.cache.setValue(bytes("v0"), forKey: "k", expiry: .seconds(3_600))
        tiers.slow.failNext(.removeEntry, with: CacheError(.deadlineExceeded, "no reply within the read deadline"))
        try await tiers.cache.removeEntry(forKey: "k")
        try await tiers.slow.removeEntry(forKey: "k")  // it landed
        // And a set of it during an outage
        startOutage(tiers)
        try await tiers.cache.setValue(bytes("v2"), forKey: "k", expiry: .seconds(3_600))
        endOutage(tiers)

        // Then the authority holding nothing is this cache's own removal: the set is replayed, not dropped
        #expect(try await tiers.cache.value(forKey: "k") == bytes("v2"))
        #expect(try await tiers.slow.value(forKey: "k") == bytes("v2"))
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func aReadWaitsForAWriteKeptAsPendingWhileTheReplayItWaitedForRan() async throws {
        // Given a key both tiers hold, and a removal of it whose call to the authority is in flight (it
        // passed the replay check while nothing was pending)
        let (tiers, journal) = try makeTiers()
        try await tiers.cache.setValue(bytes("w0"), forKey: "w", expiry: .seconds(3_600))
        tiers.slow.hold(.removeEntry)
        let removal = Task { try await tiers.cache.removeEntry(forKey: "w") }
        await tiers.slow.waitUntilHeld(.removeEntry)
        // And another write the authority missed, so a replay is due
        tiers.slow.failNext(.setEntry, with: CacheError(.unavailable, "outage"))
        try await tiers.cache.setValue(bytes("p"), forKey: "p", expiry: .seconds(3_600))
        #expect(journal.pendingWrites.map(\.operation) == [.set("p")])

        // When a read of the key starts that replay and waits for it, and while the replay runs the removal
        // fails at the authority and is kept as pending too
        tiers.slow.hold(.setEntry)
        let read = Task { try await tiers.cache.value(forKey: "w") }
        await tiers.slow.waitUntilHeld(.setEntry)
        tiers.slow.failNext(.removeEntry, with: CacheError(.unavailable, "outage"))
        tiers.slow.release(.removeEntry)
        try await removal.value
        // (the set, claimed by the replay under way, stays in the journal until it is replayed)
        #expect(journal.pendingWrites.map(\.operation) == [.set("p"), .remove("w")])
        #expect(journal.pendingWrites.map { $0.claim != nil } == [true, false])
        tiers.slow.release(.setEntry)

        // Then the read waited for the removal to be replayed too before asking the authority: the removed
        // value is not served (a read judged by the authority after the first write alone would get "w0" back)
        #expect(try await read.value == nil)
        #expect(try await tiers.slow.value(forKey: "w") == nil)
        #expect(try await tiers.slow.value(forKey: "p") == bytes("p"))
        #expect(journal.pendingWrites.isEmpty)
    }

    @Test func pendingWritesSurviveEncodingForAJournalFile() throws {
        let writes: [PendingWrite<String>] = [
            PendingWrite(id: 1, operation: .set("k"), base: 42),
            PendingWrite(id: 2, operation: .remove("r"), base: nil),
            PendingWrite(id: 3, operation: .removeAllTagged("t"), base: nil),
            PendingWrite(id: 4, operation: .removeAll, base: nil),
            PendingWrite(
                id: 5, operation: .set("s"), base: 1, writtenFingerprints: [2, 3], includesRemoval: true,
                claim: .init(owner: 9, expiresAt: Date(timeIntervalSince1970: 100))),
        ]
        let decoded = try JSONDecoder().decode([PendingWrite<String>].self, from: JSONEncoder().encode(writes))
        #expect(decoded == writes)
        // A journal an earlier version kept, without the fields added since, still decodes
        let earlier = #"[{"id":6,"operation":{"remove":{"_0":"r"}},"base":8}]"#
        let old = try JSONDecoder().decode([PendingWrite<String>].self, from: Data(earlier.utf8))
        #expect(old == [PendingWrite(id: 6, operation: .remove("r"), base: 8)])
    }

    @Test func theDataFingerprintTellsValuesAndTagsApartButNotExpiries() {
        let fingerprint = MultiCache<String, Data>.Authority.Replay(journal: InMemoryPendingWriteJournal()).fingerprint
        let entry = CacheEntry(value: bytes("v"), expiresAt: Date(timeIntervalSince1970: 10), tags: ["t"])
        var later = entry
        later.expiresAt = Date(timeIntervalSince1970: 10.0004)
        #expect(fingerprint(entry) == fingerprint(later))
        #expect(fingerprint(entry) != fingerprint(CacheEntry(value: bytes("w"), tags: ["t"])))
        #expect(fingerprint(entry) != fingerprint(CacheEntry(value: bytes("v"), tags: ["u"])))
        // Stable across processes and builds: an empty value without tags hashes only the 0xFF separator,
        // whose 64-bit FNV-1a hash (computed independently) is fixed
        #expect(fingerprint(CacheEntry(value: Data())) == 0xaf64_724c_8602_eb6e)
    }
}

/// A journal whose storage always fails.
private final class FailingJournal: PendingWriteJournal {
    typealias Key = String

    func update<Result: Sendable>(
        _ body: @escaping @Sendable (inout [PendingWrite<String>]) throws -> Result
    ) async throws -> Result {
        throw CacheError(.io, "the journal's storage failed")
    }
}

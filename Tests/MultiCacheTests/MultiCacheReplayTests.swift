import CacheCore
import CacheTesting
import Foundation
import MultiCache
import Testing

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

    @Test func withoutReplayAMissedWriteStillFails() async throws {
        let tiers = try TwoTiers(authority: .init())
        tiers.slow.failAlways(.setEntry)
        await #expect(throws: CacheError.self) {
            try await tiers.cache.setValue(bytes("v"), forKey: "k", expiry: .seconds(3_600))
        }
    }

    @Test func pendingWritesSurviveEncodingForAJournalFile() throws {
        let writes: [PendingWrite<String>] = [
            PendingWrite(id: 1, operation: .set("k"), base: 42),
            PendingWrite(id: 2, operation: .remove("r"), base: nil),
            PendingWrite(id: 3, operation: .removeAllTagged("t"), base: nil),
            PendingWrite(id: 4, operation: .removeAll, base: nil),
        ]
        let decoded = try JSONDecoder().decode([PendingWrite<String>].self, from: JSONEncoder().encode(writes))
        #expect(decoded == writes)
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

import Testing

@testable import CacheCore

/// The storage is the only owner of the state machine: every event that advances the change sequence
/// publishes it to the lock-free copy that reads note, in the same critical section.
@Suite(.timeLimit(.minutes(10)))
struct CoordinatorStorageTests {
    @Test func writeAdvancesThePublishedSequenceWhenItBeginsAndWhenItEnds() async {
        // Given an idle coordinator
        let storage = CoordinatorStorage<String, [UInt64]>()
        let start = storage.changeSequence

        // When a write of "k" runs
        let inside = await storage.fenced("k") { storage.changeSequence }
        let after = storage.changeSequence

        // Then a read sees the sequence move at its fence and again at its end
        #expect(start < inside && inside < after)
        // And a write-back noted before the write is dropped, one noted after it runs
        let stale = await storage.writeBack(key: "k", sequenceSeen: start) { 1 }
        let fresh = await storage.writeBack(key: "k", sequenceSeen: after) { 1 }
        #expect(stale == nil && fresh == 1)
    }

    @Test func removeAllAdvancesThePublishedSequenceEvenWhenItsBodyThrows() async {
        struct Failure: Error {}
        let storage = CoordinatorStorage<String, [UInt64]>()
        let start = storage.changeSequence
        await #expect(throws: Failure.self) { try await storage.fenced(nil) { throw Failure() } }
        #expect(storage.changeSequence > start)
        // The wipe has ended: a read that noted the sequence after it may write back
        let writeBack = await storage.writeBack(key: "k", sequenceSeen: storage.changeSequence) { 1 }
        #expect(writeBack == 1)
    }

    @Test func storeOfALoadedValueAdvancesThePublishedSequenceWhenItBeginsAndWhenItEnds() async throws {
        // Given a caller that misses and starts a load, which stores its value and reports the sequence
        // before, during and after the store
        let storage = CoordinatorStorage<String, [UInt64]>()
        let seen = storage.changeSequence
        let sequences = try await storage.joinLoad(of: "k", sequenceSeen: seen) { loadID, recheckTiers in
            Task {
                let before = storage.changeSequence
                let during = await storage.storeLoadedValue(ofLoad: loadID) { storage.changeSequence }
                let after = storage.changeSequence
                storage.finishLoad(loadID, with: .success([recheckTiers ? 1 : 0, before, during ?? 0, after]))
            }
        }

        // Then nothing changed "k" before the load, so it neither read again nor was kept from storing,
        // and the store moved the sequence both when it began and when it ended
        #expect(sequences[0] == 0)
        #expect(sequences[1] < sequences[2] && sequences[2] < sequences[3])
        #expect(storage.sharedJoins == 0)
    }
}

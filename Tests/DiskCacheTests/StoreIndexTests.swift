import Foundation
import Testing

@testable import DiskCache

@Suite struct StoreIndexTests {
    let t0 = Date(timeIntervalSinceReferenceDate: 1000)

    private func makeState() -> StoreAccounting.State {
        StoreAccounting.State()
    }

    @Test func totalsCountAnOverwriteOnceAndOrderIsLeastRecentFirst() {
        var index = StoreIndex()

        index.record("a", size: 10, lastAccess: t0)
        index.record("b", size: 20, lastAccess: t0)
        index.record("a", size: 15, lastAccess: t0)  // same instant: the tick breaks the tie
        index.record("c", size: 5, lastAccess: t0.addingTimeInterval(-1))

        #expect(index.count == 3)
        #expect(index.totalBytes == 40)
        #expect(index.leastRecentlyUsedFirst() == ["c", "b", "a"])
        index.remove("b")
        #expect(index.totalBytes == 20)
    }

    @Test func rescanKeepsTiesForUnchangedFilesAndTakesSizesFromDisk() {
        var index = StoreIndex()
        index.record("x", size: 10, lastAccess: t0)
        index.record("y", size: 10, lastAccess: t0)

        index.replace(with: [
            "x": (size: 11, modified: t0), "y": (size: 12, modified: t0), "z": (size: 1, modified: t0),
        ])

        #expect(index.totalBytes == 24)
        #expect(index.leastRecentlyUsedFirst() == ["z", "x", "y"])
    }

    @Test func changesDuringAScanAreReplayedOntoItsResult() {
        // Given a scan in flight that will miss a write and still see a removed file
        var state = makeState()
        let generation = state.beginScan()
        state.indexRecord("new", size: 7, lastAccess: t0)
        state.indexRemove("old")

        // When the scan installs its (older) view of the folder
        let installed = state.finishScan(
            ["old": (size: 3, modified: t0), "kept": (size: 4, modified: t0)], generation: generation,
            onlyIfMissing: true)

        // Then the index has both the scan and the changes made meanwhile
        #expect(installed)
        #expect(state.index?.count == 2)
        #expect(state.index?.totalBytes == 11)
        #expect(state.journal.isEmpty)
    }

    @Test func aWipeDuringAScanDiscardsTheScan() {
        var state = makeState()
        let generation = state.beginScan()

        state.resetIndex(to: StoreIndex())
        let installed = state.finishScan(
            ["gone": (size: 3, modified: t0)], generation: generation, onlyIfMissing: false)

        #expect(!installed)
        #expect(state.index?.count == 0)
        #expect(state.activeScans == 0)
    }

    @Test func limitsAreExceededOnlyPastEitherLimitAndLowWaterRoundsDown() {
        let limits = StoreAccounting.Limits(bytes: 100, count: 10)

        #expect(!limits.areExceeded(count: 10, bytes: 100))
        #expect(limits.areExceeded(count: 11, bytes: 0))
        #expect(limits.areExceeded(count: 0, bytes: 101))
        #expect(!StoreAccounting.Limits(bytes: nil, count: nil).areExceeded(count: .max, bytes: .max))
        let target = limits.lowWater(0.85)
        #expect(target.bytes == 85 && target.count == 8)
    }

    @Test func accountingCountsInsertionsAndHitsButAHitNeverAddsAName() {
        let accounting = StoreAccounting()
        accounting.resetIndex(to: StoreIndex())

        accounting.recordInsertion("a", size: 10, lastAccess: t0)
        accounting.recordHit("a", lastAccess: t0.addingTimeInterval(1))
        accounting.recordHit("unknown", lastAccess: t0)
        accounting.recordRemoval("missing")

        #expect(accounting.totals == (count: 1, bytes: 10))
        #expect(accounting.pending.insertions == 1 && accounting.pending.hits == 2)
        #expect(accounting.exceeds(StoreAccounting.Limits(bytes: 9, count: nil)))
        accounting.subtractPending(accounting.pending)
        #expect(accounting.pending.isZero)
    }
}

import Foundation
import SealedRecord
import Testing

/// The counter rule's numbers (FenceCounter): fresh bases far above anything the former scheme counted to, and
/// below the ceiling of Redis's signed `INCR`.
@Suite struct FenceCounterTests {
    @Test func freshBasesLieAbove2To62AndLeave2To61IncrementsBelowTheSignedMaximum() {
        #expect(FenceCounter.baseRange.lowerBound == 1 << 62)
        #expect(FenceCounter.baseRange.upperBound + (1 << 61) - 1 == UInt64(Int64.max))
        let bases = (0..<1_000).map { _ in FenceCounter.freshBase() }
        #expect(bases.allSatisfy { FenceCounter.baseRange.contains($0) })
        // 1,000 draws of 61 random bits: a repeat would mean the generator is not random
        #expect(Set(bases).count == bases.count)
    }

    @Test func advancingAddsOneToACounterAndStartsAMissingOneAtAFreshBase() {
        #expect(FenceCounter.advanced(from: 0) == 1)
        #expect(FenceCounter.advanced(from: FenceCounter.baseRange.lowerBound) == FenceCounter.baseRange.lowerBound + 1)
        let restarted = FenceCounter.advanced(from: nil)
        #expect(FenceCounter.baseRange.contains(restarted))
        #expect(FenceCounter.neverCurrent == .max)
        #expect(!FenceCounter.baseRange.contains(FenceCounter.neverCurrent))
    }

    @Test func aMissingEpochMatchesNoRecord() {
        let stamp = RecordStamp(epoch: 0, expiresAt: nil, staleUntil: nil)
        #expect(stamp.liveness(currentEpoch: nil, currentTagVersions: [:], at: Date()) == .wrongEpoch)
        #expect(stamp.liveness(currentEpoch: 0, currentTagVersions: [:], at: Date()) == .live)
    }
}

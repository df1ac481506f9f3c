import Foundation
import SealedRecord
import Testing

/// The one liveness rule (RecordStamp+Liveness.swift) as a table: every verdict, its boundaries and the
/// order in which the conditions are tested.
@Suite struct RecordLivenessTests {
    /// One row: the stamp's fields relative to `now` (seconds; `nil` for none), the current epoch and tag
    /// versions, and the verdict.
    struct Row: Sendable, CustomTestStringConvertible {
        var label: String
        var epoch: UInt64 = 5
        var expiresIn: TimeInterval?
        var staleFor: TimeInterval?
        var stamped: [String: UInt64] = [:]
        var currentEpoch: UInt64 = 5
        var current: [String: UInt64] = [:]
        var verdict: RecordLiveness

        var testDescription: String { label }
    }

    static let now = Date(timeIntervalSinceReferenceDate: 800_000_000)

    static let rows: [Row] = [
        Row(label: "no expiry", verdict: .live),
        Row(label: "before its expiry", expiresIn: 1, verdict: .live),
        Row(label: "at its expiry instant", expiresIn: 0, verdict: .expired),
        Row(label: "after its expiry", expiresIn: -1, verdict: .expired),
        Row(label: "before its expiry with a stale window", expiresIn: 1, staleFor: 60, verdict: .live),
        Row(label: "at its expiry with a stale window", expiresIn: 0, staleFor: 60, verdict: .servableStale),
        Row(label: "inside its stale window", expiresIn: -30, staleFor: 60, verdict: .servableStale),
        Row(label: "at the end of its stale window", expiresIn: -60, staleFor: 60, verdict: .expired),
        Row(label: "past its stale window", expiresIn: -61, staleFor: 60, verdict: .expired),
        Row(label: "an older epoch", epoch: 4, verdict: .wrongEpoch),
        Row(label: "a newer epoch (a removeAll not yet seen here)", epoch: 6, verdict: .wrongEpoch),
        Row(label: "an older epoch, expired too", epoch: 4, expiresIn: -1, verdict: .wrongEpoch),
        Row(label: "tags all current", stamped: ["a": 1, "b": 0], current: ["a": 1, "b": 0], verdict: .live),
        Row(
            label: "one tag removed since", stamped: ["a": 1, "b": 0], current: ["a": 2, "b": 0], verdict: .fencedByTag),
        Row(label: "a tag whose counter went back", stamped: ["a": 3], current: ["a": 2], verdict: .fencedByTag),
        Row(label: "a tag whose version is unknown", stamped: ["a": 0], current: [:], verdict: .fencedByTag),
        Row(label: "the empty tag, current", stamped: ["": 0], current: ["": 0], verdict: .live),
        Row(
            label: "fenced inside its stale window", expiresIn: -1, staleFor: 60, stamped: ["a": 1], current: ["a": 2],
            verdict: .fencedByTag),
        Row(label: "fenced and expired", expiresIn: -1, stamped: ["a": 1], current: ["a": 2], verdict: .fencedByTag),
        Row(
            label: "fenced and of an older epoch", epoch: 1, stamped: ["a": 1], current: ["a": 2], verdict: .wrongEpoch),
        Row(label: "expired, tags current", expiresIn: -1, stamped: ["a": 1], current: ["a": 1], verdict: .expired),
        Row(label: "stale window without expiry (never written)", staleFor: 60, verdict: .live),
    ]

    @Test(arguments: rows)
    func verdict(_ row: Row) {
        let expiresAt = row.expiresIn.map { Self.now.addingTimeInterval($0) }
        let stamp = RecordStamp(
            epoch: row.epoch, expiresAt: expiresAt,
            staleUntil: row.staleFor.map { (expiresAt ?? Self.now).addingTimeInterval($0) }, tagVersions: row.stamped)
        #expect(
            stamp.liveness(currentEpoch: row.currentEpoch, currentTagVersions: row.current, at: Self.now) == row.verdict
        )
    }

    @Test func everyVerdictAppearsInTheTable() {
        #expect(Set(Self.rows.map(\.verdict)) == Set(RecordLiveness.allCases))
    }

    @Test func aHeaderOnlyJudgementCannotFenceButStillSeesEpochAndExpiry() {
        // Before the tag block is open a tier passes no stamps: the record is judged on epoch and time alone.
        let stamp = RecordStamp(epoch: 2, expiresAt: Self.now.addingTimeInterval(-1), staleUntil: nil)
        #expect(stamp.liveness(currentEpoch: 2, currentTagVersions: ["a": 9], at: Self.now) == .expired)
        #expect(stamp.liveness(currentEpoch: 3, currentTagVersions: [:], at: Self.now) == .wrongEpoch)
    }

    @Test func theTagFenceRuleAloneComparesEveryStamp() {
        #expect(RecordStamp.tagsAreCurrent([:], in: [:]))
        #expect(RecordStamp.tagsAreCurrent(["a": 1], in: ["a": 1, "b": 4]))
        #expect(!RecordStamp.tagsAreCurrent(["a": 1, "b": 3], in: ["a": 1, "b": 4]))
        #expect(!RecordStamp.tagsAreCurrent(["a": 1], in: ["b": 1]))
    }
}

import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// The WAL hook of a read-write connection: a WAL pushed past its limit by a reader of another connection is
/// brought back under it by the next commit once that reader is gone, and commits meanwhile neither fail nor
/// wait out the busy timeout.
@Suite struct SQLiteWALGuardTests {
    let folder = TemporaryFolder(label: "sqlite-wal")

    /// A writer whose WAL limit is 64 KiB and whose hook checkpoints from 8 frames, so a few rows exercise it.
    func makeWriter() throws -> SQLiteConnection {
        var options = SQLiteConnection.Options()
        options.journalSizeLimit = 64 << 10
        options.walCheckpointPages = 8
        return try makeConnection(folder, options: options)
    }

    @Test func walPastItsLimitWhileAReaderHeldItIsTruncatedByTheNextCommitAfterTheReaderLeaves() throws {
        // Given a writer and a reader of another connection holding a read transaction open
        let writer = try makeWriter()
        let reader = try makeConnection(folder)
        let wal = folder.database + "-wal"
        try insertItem(writer, id: 0, value: [0])
        let started = Date()
        try reader.readTransaction {
            #expect(try itemCount(reader) == 1)
            // When the writer commits well past the WAL's limit meanwhile
            for id in 1...60 { try insertItem(writer, id: Int64(id), value: Array(repeating: 7, count: 3_000)) }
            // Then the reader kept the WAL past its limit, the commits tried to truncate it and did not fail
            #expect(fileSize(wal) > 64 << 10)
            #expect(writer.walGuard?.starved == true)
        }
        // And only the first try waited (boundedly), not each commit the busy timeout
        #expect(Date().timeIntervalSince(started) < 4)
        #expect((writer.walGuard?.limitCheckpoints ?? 0) > 1)

        // When the reader has left and the writer commits once more
        try insertItem(writer, id: 61, value: [1])

        // Then that commit brought the WAL back under its limit, and every row is there
        #expect(fileSize(wal) <= 64 << 10)
        #expect(writer.walGuard?.starved == false)
        #expect(try itemCount(reader) == 62)
    }

    @Test func walUnderItsLimitIsCheckpointedPassivelyAndReused() throws {
        // Given a writer and no reader
        let writer = try makeWriter()
        // When it commits many times
        for id in 1...200 { try insertItem(writer, id: Int64(id), value: Array(repeating: 7, count: 3_000)) }
        // Then its passive checkpoints kept the WAL within its limit plus one commit, with no truncation needed
        #expect(fileSize(folder.database + "-wal") <= (64 << 10) + 2 * 4_120)
        #expect((writer.walGuard?.passiveCheckpoints ?? 0) > 0)
        #expect(writer.walGuard?.limitCheckpoints == 0)
    }

    @Test func aWALThatKeepsGrowingPastItsLimitIsWaitedForAgainAtEachFurtherMultipleOfIt() {
        // Given a guard whose limit is 16 frames' worth and whose injected checkpoint never finishes (readers
        // that never all leave), recording the wait each commit's checkpoint was given
        var waits: [(mode: SQLiteConnection.CheckpointMode, wait: Int?)] = []
        let guardian = SQLiteWALGuard(
            checkpointPages: 8, limitBytes: 32 + 16 * 4_120, restartWaitMilliseconds: 20,
            checkpoint: { mode, wait in
                waits.append((mode, wait))
                return false
            })

        // When commits of 2 frames each take the WAL from 2 to 60 frames (3.6 limits)
        for frames in stride(from: 2, through: 60, by: 2) { guardian.committed(frames: frames) }

        // Then from 8 frames up to the limit they checkpoint passively; past it each commit truncates, and
        // exactly the first commit past the limit and the first past each further multiple (the WAL passes 2×
        // after 32 frames, 3× after 48) wait, 20 ms each; the others only try
        let truncates = waits.filter { $0.mode == .truncate }
        #expect(waits.filter { $0.mode == .passive }.count == 5)
        #expect(truncates.count == 22)
        let waitingAt = truncates.indices.filter { truncates[$0].wait == 20 }.map { 18 + 2 * $0 }
        #expect(waitingAt == [18, 34, 50])
        #expect(truncates.allSatisfy { $0.wait == 20 || $0.wait == 0 })
        #expect(guardian.starved)

        // When another connection resets the WAL (this one's next commit finds 4 frames) and it grows past the
        // limit again
        waits.removeAll()
        for frames in [4, 18, 20] { guardian.committed(frames: frames) }
        // Then the first commit past the limit waits again, the next only tries
        #expect(waits.map(\.wait) == [20, 0])
    }
}

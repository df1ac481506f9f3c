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
}

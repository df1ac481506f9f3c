import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// A wipe, or any replacement of `store.check`, made by another instance (standing in for another
/// process) must take effect in this one at its very next read.
@Suite struct DiskCacheEpochTests {
    let folder = TemporaryFolder()

    @Test(arguments: TestStore.engines)
    func interruptedWipeByAnotherInstanceHidesEntriesAtOnce(_ engine: Engine) throws {
        // Given an entry both instances can read
        let first = try makeCache(folder, engine: engine)
        let second = try makeCache(folder, engine: engine)
        try first.setValue(Data([1]), forKey: "k")
        #expect(try first.value(forKey: "k") == Data([1]))

        // When the other instance starts a new epoch but deletes no file (an interrupted wipe)
        try second.startNewEpochDeletingNothing()

        // Then the file, still whole and of this instance's old epoch, no longer reads here
        #expect(try first.value(forKey: "k") == nil)
        #expect(first.statistics.corruptEntriesRemoved == 1)
    }

    @Test(arguments: TestStore.engines)
    func aWipeReportsEachFileItDeletesAgainstTheTotal(_ engine: Engine) throws {
        // Given a store of 30 entries
        let cache = try makeCache(folder, engine: engine)
        for index in 0..<30 { try cache.setValue(Data([UInt8(index)]), forKey: "k\(index)") }
        // When every entry is removed with a progress callback
        var reports: [[Int]] = []
        try cache.removeAll { done, total in reports.append([done, total]) }
        // Then it counted the files first, then reported each deletion against that total
        #expect(reports.first == [0, 30])
        #expect(reports.last == [30, 30])
        #expect(reports.map { $0[0] } == Array(0...30))
        #expect(cache.count == 0)
        #expect(try cache.value(forKey: "k3") == nil)
    }

    @Test func recordRenamedOverFromOutsideIsNoticed() throws {
        let cache = try makeCache(folder)
        try cache.setValue(Data([1]), forKey: "k")
        #expect(try cache.value(forKey: "k") == Data([1]))

        // When a record with a new salt is renamed over store.check, as a wipe elsewhere does
        let path = cache.store.layout.checkRecord
        let record = try KeyCheckRecord.make(
            salt: Data(repeating: 7, count: KeyCheckRecord.saltSize), master: cache.store.master)
        try record.write(to: URL(fileURLWithPath: path + ".new"))
        #expect(rename(path + ".new", path) == 0)

        // Then the entry of the earlier epoch is a miss, and new writes use the new epoch
        #expect(try cache.value(forKey: "k") == nil)
        try cache.setValue(Data([2]), forKey: "k")
        let reopened = try makeCache(folder)
        #expect(try reopened.value(forKey: "k") == Data([2]))
    }

    @Test func recordOverwrittenInPlaceIsNoticed() throws {
        let cache = try makeCache(folder)
        try cache.setValue(Data([1]), forKey: "k")
        #expect(try cache.value(forKey: "k") == Data([1]))

        // When the bytes of store.check are replaced in place (same inode, same size)
        let path = cache.store.layout.checkRecord
        let record = try KeyCheckRecord.make(
            salt: Data(repeating: 9, count: KeyCheckRecord.saltSize), master: cache.store.master)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.write(contentsOf: record)
        try handle.close()

        // Then this instance sees the change and the earlier epoch's entry is a miss
        #expect(try cache.value(forKey: "k") == nil)
    }

    @Test(arguments: TestStore.engines)
    func storeFolderDeletedAndRecreatedByAnotherInstanceIsFollowed(_ engine: Engine) throws {
        // Given an instance that has read the record of the first store
        let clock = ManualClock()
        let first = try makeCache(folder, clock: clock, engine: engine)
        try first.setValue(Data([1]), forKey: "k")
        #expect(try first.value(forKey: "k") == Data([1]))

        // When the whole folder is deleted and another instance creates a new store there
        try FileManager.default.removeItem(at: folder.store)
        let second = try makeCache(folder, engine: engine)
        try second.setValue(Data([2]), forKey: "k")

        // Then the first instance reads the new store's entry with the new store's epoch (the SQLite engine's
        // reads look at the database's path once a second)
        clock.advance(by: 1)
        #expect(try first.value(forKey: "k") == Data([2]))
    }

    // MARK: - The epoch guard, on its own

    @Test(arguments: TestStore.engines)
    func verifyReportsALeftoverOfAnotherInstancesWipeAsAnOldEpoch(_ engine: Engine) throws {
        // Given an entry written by this instance, and a wipe by another that rotated the epoch but left the file
        let cache = try makeCache(folder, engine: engine)
        let other = try makeCache(folder, engine: engine)
        try cache.setValue(Data([1]), forKey: "k")
        let path = try cache.reportedPath(for: "k")
        try other.startNewEpochDeletingNothing()

        // When this instance verifies the store
        let report = try cache.verify()

        // Then the file is removed as an old epoch: told apart by its header, not by a failed decryption
        #expect(report.removed == [path])
        #expect(report.issues.map(\.reason) == [CorruptionReason.oldEpoch.rawValue])
    }

    @Test func aReaderWhoseEpochWentStaleRetriesInsteadOfDeletingAFreshEntry() throws {
        // Given a reader holding the store folder open, with the epoch of its check record
        let reader = try makeCache(folder)
        try reader.setValue(Data([1]), forKey: "k")
        #expect(try reader.value(forKey: "k") == Data([1]))

        // When the folder is moved aside (its store.check unchanged, its entries gone) and another instance
        // makes a new store at the path, with a new epoch, and writes the key there: the reader's look at
        // store.check still finds its old epoch, the deterministic form of a wipe by another process landing
        // between that look and the read of the entry
        let aside = folder.url.appendingPathComponent("aside")
        try FileManager.default.moveItem(at: folder.store, to: aside)
        try FileManager.default.removeItem(at: aside.appendingPathComponent("entries"))
        let writer = try makeCache(folder)
        try writer.setValue(Data([2]), forKey: "k")
        let value = try reader.value(forKey: "k")

        // Then the newer epoch in the header makes the reader refresh its epoch and read the entry, which
        // stays; never an authentication failure that deletes another instance's fresh entry
        #expect(value == Data([2]))
        #expect(reader.statistics.corruptEntriesRemoved == 0)
        #expect(try writer.value(forKey: "k") == Data([2]))
    }
}

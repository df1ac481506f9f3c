import CacheCore
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// A wipe, or any replacement of `store.check`, made by another instance (standing in for another
/// process) must take effect in this one at its very next read.
@Suite struct DiskCacheEpochTests {
    let folder = TemporaryFolder()

    @Test func interruptedWipeByAnotherInstanceHidesEntriesAtOnce() throws {
        // Given an entry both instances can read
        let first = try makeCache(folder)
        let second = try makeCache(folder)
        try first.setValue(Data([1]), forKey: "k")
        #expect(try first.value(forKey: "k") == Data([1]))

        // When the other instance starts a new epoch but deletes no file (an interrupted wipe)
        try second.store.removeAll(deletingEntries: false)

        // Then the file, still whole and of this instance's old epoch, no longer reads here
        #expect(try first.value(forKey: "k") == nil)
        #expect(first.statistics.corruptEntriesRemoved == 1)
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

    @Test func storeFolderDeletedAndRecreatedByAnotherInstanceIsFollowed() throws {
        // Given an instance that has read the record of the first store
        let first = try makeCache(folder)
        try first.setValue(Data([1]), forKey: "k")
        #expect(try first.value(forKey: "k") == Data([1]))

        // When the whole folder is deleted and another instance creates a new store there
        try FileManager.default.removeItem(at: folder.store)
        let second = try makeCache(folder)
        try second.setValue(Data([2]), forKey: "k")

        // Then the first instance reads the new store's entry with the new store's epoch
        #expect(try first.value(forKey: "k") == Data([2]))
    }
}

import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// Values sealed larger than the row limit live in files under `large/`, named through their rows: written
/// before the row commits, unlinked after the row's deletion commits, bound to their row by the seal.
@Suite struct SQLiteEngineLargeValueTests {
    let folder = TemporaryFolder()
    let large = Data(
        (0..<(DiskCacheConfiguration.Engine.sqliteRowLimit + 1_000)).map { UInt8(truncatingIfNeeded: $0 &* 31) })

    var largeFiles: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.store.path + "/large")) ?? []).sorted()
    }

    @Test func aLargeValueLivesInOneFileThatFollowsItsRow() throws {
        let cache = try makeSQLiteCache(folder)

        try cache.setValue(large, forKey: "big")
        #expect(try cache.value(forKey: "big") == large)
        #expect(largeFiles.count == 1)
        let database = try StoreDatabase(folder)
        #expect(try database.texts("SELECT file FROM entry") == largeFiles)
        #expect(try database.integers("SELECT length(value) FROM entry") == [0])

        // Replaced: the new file in place, the old one gone once the new row committed.
        var replacement = large
        replacement[0] ^= 0xFF
        try cache.setValue(replacement, forKey: "big")
        #expect(try cache.value(forKey: "big") == replacement)
        #expect(largeFiles.count == 1)
        #expect(try database.texts("SELECT file FROM entry") == largeFiles)

        // Replaced by a small value, then removed: nothing left in large/.
        try cache.setValue(Data("small".utf8), forKey: "big")
        #expect(largeFiles.isEmpty)
        try cache.setValue(large, forKey: "big")
        try cache.removeEntry(forKey: "big")
        #expect(largeFiles.isEmpty)
        #expect(cache.count == 0)
    }

    @Test func aMissingOrSwappedLargeFileIsAMissNeverAnotherValue() throws {
        let cache = try makeSQLiteCache(folder)
        var other = large
        other[10] ^= 0x55
        try cache.setValue(large, forKey: "a")
        try cache.setValue(other, forKey: "b")
        let database = try StoreDatabase(folder)
        let names = try database.texts("SELECT file FROM entry ORDER BY file")
        let path = { (name: String) in self.folder.store.path + "/large/" + name }

        // Swap the two files' contents (same sizes): each file now holds the other key's sealed value.
        let first = try Data(contentsOf: URL(fileURLWithPath: path(names[0])))
        let second = try Data(contentsOf: URL(fileURLWithPath: path(names[1])))
        try second.write(to: URL(fileURLWithPath: path(names[0])))
        try first.write(to: URL(fileURLWithPath: path(names[1])))

        #expect(try cache.value(forKey: "a") == nil)
        #expect(try cache.value(forKey: "b") == nil)
        #expect(cache.statistics.corruptEntriesRemoved == 2)

        try cache.setValue(large, forKey: "c")
        try FileManager.default.removeItem(atPath: path(try database.texts("SELECT file FROM entry")[0]))
        #expect(try cache.value(forKey: "c") == nil)
        #expect(cache.count == 0)
    }

    @Test func aFolderInPlaceOfALargeFileIsAMissNamedForWhatItIsAndLeftInPlace() throws {
        // Given a large value whose file is then replaced by a folder
        let events = EventRecorder()
        let cache = try makeSQLiteCache(folder, observer: events.observer)
        try cache.setValue(large, forKey: "a")
        let name = try #require(largeFiles.first)
        let path = folder.store.path + "/large/" + name
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)

        // When it is read
        #expect(try cache.value(forKey: "a") == nil)

        // Then the row is removed as corrupt, for its value file (not as a truncated record), and the folder,
        // which the store did not make, stays
        let removals = events.messages(of: .corruptEntryRemoved)
        #expect(
            removals.count == 1 && removals[0].hasSuffix("removed a corrupt entry (valueFileUnusable)"), "\(removals)")
        var isDirectory: ObjCBool = false
        #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue)
    }

    @Test func aFileNameEditedToLeaveTheFolderIsNeverOpenedOrDeleted() throws {
        let cache = try makeSQLiteCache(folder)
        try cache.setValue(large, forKey: "a")
        let outside = folder.url.appendingPathComponent("victim")
        try Data("keep me".utf8).write(to: outside)
        let database = try StoreDatabase(folder)

        // Replaced while its row names the edited file; then read (a corrupt row is removed); then wiped.
        try database.execute("UPDATE entry SET file = '../../victim'")
        try cache.setValue(large, forKey: "a")
        #expect(try Data(contentsOf: outside) == Data("keep me".utf8))
        try database.execute("UPDATE entry SET file = '../../victim'")
        #expect(try cache.value(forKey: "a") == nil)
        #expect(try Data(contentsOf: outside) == Data("keep me".utf8))
        try cache.setValue(large, forKey: "a")
        try database.execute("UPDATE entry SET file = '../../victim'")
        try cache.removeAll()
        #expect(try Data(contentsOf: outside) == Data("keep me".utf8))
    }
}

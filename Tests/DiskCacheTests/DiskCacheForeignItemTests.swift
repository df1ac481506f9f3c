import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// Directories the store did not create, sitting where entry files belong.
@Suite struct DiskCacheForeignItemTests {
    let folder = TemporaryFolder()
    let events = EventRecorder()

    var quarantine: URL { folder.store.appendingPathComponent("quarantine", isDirectory: true) }

    /// Makes a directory holding one file at `path`, as another program might.
    func plantDirectory(at path: String) throws {
        let inner = URL(fileURLWithPath: path).appendingPathComponent("inner", isDirectory: true)
        try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
        try Data("someone's data".utf8).write(to: inner.appendingPathComponent("file"))
    }

    /// The quarantined items, with the contents of the file planted in each.
    func quarantined() throws -> [String: Data] {
        var found: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: quarantine.path) {
            found[name] = try Data(contentsOf: quarantine.appendingPathComponent(name + "/inner/file"))
        }
        return found
    }

    @Test func setEntryMovesAForeignDirectoryAsideAndStoresTheValue() throws {
        // Given a directory where the entry file for "k" belongs
        let cache = try makeCache(folder, observer: events.observer)
        let path = try cache.entryPath(for: "k")
        try plantDirectory(at: path)

        // When "k" is written
        try cache.setValue(Data([7]), forKey: "k")

        // Then the value is stored, and the directory was moved whole into quarantine/ and reported
        #expect(try cache.value(forKey: "k") == Data([7]))
        let moved = try quarantined()
        #expect(moved.count == 1)
        #expect(moved.keys.first?.hasPrefix((path as NSString).lastPathComponent) == true)
        #expect(moved.values.first == Data("someone's data".utf8))
        #expect(events.count(of: .corruptEntryRemoved) == 1)
    }

    @Test func removeEntryMovesAForeignDirectoryAside() throws {
        // Given a directory where the entry file for "k" belongs, next to a real entry
        let cache = try makeCache(folder, observer: events.observer)
        try cache.setValue(Data([1]), forKey: "other")
        let path = try cache.entryPath(for: "k")
        try plantDirectory(at: path)

        // When "k" is removed
        try cache.removeEntry(forKey: "k")

        // Then its name is free, the directory is in quarantine/, and the other entry is untouched
        #expect(!FileManager.default.fileExists(atPath: path))
        #expect(try quarantined().count == 1)
        #expect(try cache.value(forKey: "other") == Data([1]))
        #expect(events.count(of: .corruptEntryRemoved) == 1)
    }

    @Test func removeAllMovesForeignDirectoriesAsideAndRemovesEveryEntry() throws {
        // Given two entries and a directory where a third entry's file belongs
        let cache = try makeCache(folder, observer: events.observer)
        try cache.setValue(Data([1]), forKey: "a")
        try cache.setValue(Data([2]), forKey: "b")
        try plantDirectory(at: try cache.entryPath(for: "c"))

        // When everything is removed
        try cache.removeAll()

        // Then it succeeds: no entry file is left, the directory is in quarantine/, the store works
        #expect(entryFiles(folder).isEmpty)
        #expect(try quarantined().count == 1)
        #expect(try cache.value(forKey: "a") == nil)
        try cache.setValue(Data([3]), forKey: "c")
        #expect(try cache.value(forKey: "c") == Data([3]))
        #expect(try cache.value(forKey: "b") == nil)
    }
}

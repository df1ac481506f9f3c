import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// Stores on file systems that refuse writes (a read-only bind mount) or run out of space (a tiny tmpfs).
@Suite(.enabled(if: Mounts.available, Comment(rawValue: Mounts.requirement)))
struct DiskCacheMountedStoreTests {
    let folder = TemporaryFolder()
    let events = EventRecorder()

    /// Opens the store in `folder` on `engine` through a read-only bind mount at `<folder>/readonly`.
    func openReadOnlyView(_ engine: Engine) throws -> (DiskCache<String, Data>, MountPoint) {
        let view = folder.url.appendingPathComponent("readonly", isDirectory: true)
        try FileManager.default.createDirectory(at: view, withIntermediateDirectories: true)
        let mount = try Mounts.bindReadOnly(folder.store, at: view)
        do {
            let cache = try DiskCache<String, Data>(
                configuration: DiskCacheConfiguration(
                    name: "tests", directory: view, byteLimit: 1 << 20, masterKeySource: .masterKey(TestKeys.primary),
                    clock: ManualClock(), observer: events.observer, engine: engine))
            return (cache, mount)
        } catch {
            mount.unmount()
            throw error
        }
    }

    // MARK: - Read-only stores

    @Test(arguments: TestStore.engines)
    func readOnlyStoreServesHitsListingStatisticsAndVerify(_ engine: Engine) throws {
        // Given a store with two entries and flushed counters
        let writer = try makeCache(folder, engine: engine)
        try writer.setValue(Data("one".utf8), forKey: "a")
        try writer.setValue(Data("two".utf8), forKey: "b")
        _ = try writer.value(forKey: "a")
        try writer.flushStatistics()

        // When it is opened through a read-only mount
        var opened: (DiskCache<String, Data>, MountPoint)?
        opened = try openReadOnlyView(engine)
        guard let (cache, mount) = opened else { return }
        defer { mount.unmount() }

        // Then every read works
        #expect(try cache.value(forKey: "a") == Data("one".utf8))
        #expect(try cache.value(forKey: "missing") == nil)
        #expect(try cache.listEntries().map(\.key).sorted() == ["a", "b"])
        let statistics = cache.statistics
        #expect(cache.count == 2)
        #expect(statistics.hits == 2)  // one flushed by the writer, one of this instance
        #expect(try cache.verify().checked == 2)
        #expect(try cache.removeExpired() == 0)
        // and flushing counters is silently skipped (nothing to write to)
        try cache.flushStatistics()
    }

    @Test(arguments: TestStore.engines)
    func readOnlyStoreRefusesEveryChangeWithOneClearErrorAndDeletesNothing(_ engine: Engine) throws {
        // Given a store with an entry, opened through a read-only mount
        let writer = try makeCache(folder, engine: engine)
        try writer.setValue(Data("kept".utf8), forKey: "a")
        let filesBefore = allFiles(under: folder.store)
        var opened: (DiskCache<String, Data>, MountPoint)?
        opened = try openReadOnlyView(engine)
        guard let (cache, mount) = opened else { return }
        defer { mount.unmount() }

        // When anything would change it
        let changes: [(String, () throws -> Void)] = [
            ("store an entry", { try cache.setValue(Data("new".utf8), forKey: "b") }),
            ("remove an entry", { try cache.removeEntry(forKey: "a") }),
            ("remove all entries", { try cache.removeAll() }),
            ("trim", { _ = try cache.trim(toBytes: 0) }),
            // taking a key's lock creates its lock file: refused before `body` runs
            ("take a key's lock", { try cache.withLock(forKey: "a") { () -> Void in Issue.record("body ran") } }),
            (
                "take a key's lock",
                { _ = try cache.withLockIfAvailable(forKey: "a") { () -> Void in Issue.record("body ran") } }
            ),
        ]
        for (operation, change) in changes {
            // Then it throws readOnly naming the store and what was refused
            let error = #expect(throws: CacheError.self, "\(operation)") { try change() }
            #expect(error?.code == .readOnly)
            #expect(error?.message.contains("cannot \(operation) in store 'tests'") == true)
            #expect(error?.message.contains("read-only file system") == true)
        }

        // And nothing was changed or deleted
        #expect(allFiles(under: folder.store) == filesBefore)
        #expect(try cache.value(forKey: "a") == Data("kept".utf8))
    }

    @Test(arguments: TestStore.engines)
    func readOnlyFolderWithoutAStoreFailsToOpenAsReadOnly(_ engine: Engine) throws {
        // Given an empty folder (no store yet) seen read-only
        try FileManager.default.createDirectory(at: folder.store, withIntermediateDirectories: true)

        // When it is opened
        let error = #expect(throws: CacheError.self) { _ = try openReadOnlyView(engine) }

        // Then the creation failure is reported as such: there is nothing to read
        #expect(error?.code == .readOnly)
    }

    // MARK: - Full disk

    @Test(arguments: TestStore.engines)
    func removeAllOnAFullDiskDeletesTheEntriesThenStartsANewEpoch(_ engine: Engine) throws {
        // Given a store on a 128 KiB file system, filled until a write fails for lack of space
        let mount = try Mounts.tmpfs(at: folder.store, bytes: 128 << 10)
        defer { mount.unmount() }
        let cache = try makeCache(folder, observer: events.observer, engine: engine)
        var stored = 0
        var full = false
        while !full && stored < 1_000 {
            do {
                try cache.setValue(Data(repeating: 7, count: 3_000), forKey: "k\(stored)")
                stored += 1
            } catch let error as CacheError where error.code == .outOfSpace {
                full = true
            }
        }
        #expect(full)
        #expect(stored > 0)
        let storage = EngineStorage(folder, engine)
        let saltBefore = try storage.epochSalt()

        // When the store is cleared
        try cache.removeAll()

        // Then every entry is gone, a new epoch is in place, and the store takes writes again
        #expect(try storage.count() == 0)
        #expect(try storage.epochSalt() != saltBefore)
        #expect(try cache.value(forKey: "k0") == nil)
        try cache.setValue(Data([1]), forKey: "after")
        #expect(try cache.value(forKey: "after") == Data([1]))
        #expect(try makeCache(folder, engine: engine).value(forKey: "after") == Data([1]))
    }
}

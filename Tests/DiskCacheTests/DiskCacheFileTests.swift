import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

@Suite struct DiskCacheFileTests {
    let folder = TemporaryFolder()
    let events = EventRecorder()

    @Test func aFileChangedSinceItWasReadIsNotRemovedEvenUnderTheSameInodeNumber() throws {
        // Given an entry, and its file's status as a sweep or a read holds it once it decided to remove it
        let cache = try makeCache(folder)
        try cache.setValue(Data("old".utf8), forKey: "a")
        let path = try #require(entryFiles(folder).first)
        let name = URL(fileURLWithPath: path).lastPathComponent
        let (fd, directory) = try #require(try cache.store.openEntryFile(name))
        let read = try FileSystem.status(of: fd, path: name)
        FileSystem.closeFile(fd)
        // When the name holds other bytes under the same inode number (what a newer entry whose file took
        // the freed inode looks like), stood in for by a rewrite in place
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("newer".utf8))
        try handle.close()
        #expect(try directory.status(name)?.isSameFile(as: read) == true)
        // Then the removal that decided on the file read leaves it alone
        #expect(!cache.store.removeIfUnchanged(name, in: directory, status: read))
        #expect(entryFiles(folder) == [path])
        // And the file as it is now can be removed
        let current = try #require(try directory.status(name))
        #expect(cache.store.removeIfUnchanged(name, in: directory, status: current))
        #expect(entryFiles(folder).isEmpty)
    }

    @Test(arguments: TestStore.engines)
    func staleTemporaryFilesAreRemovedOnOpenAndFreshOnesKept(_ engine: Engine) throws {
        // Given a crashed writer's temporary file (an hour old) and a live writer's (just written)
        _ = try makeCache(folder, engine: engine)
        let tmp = folder.store.appendingPathComponent("tmp")
        let stale = tmp.appendingPathComponent("1-dead-1.tmp")
        let fresh = tmp.appendingPathComponent("\(getpid())-beef-1.tmp")
        let foreign = tmp.appendingPathComponent("notes.txt")
        for file in [stale, fresh, foreign] {
            try Data("partial".utf8).write(to: file)
        }
        for file in [stale, foreign] {
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(-3600)], ofItemAtPath: file.path)
        }

        // When the store is opened
        _ = try makeCache(folder, observer: events.observer, engine: engine)

        // Then only the stale one is gone: a name not of Strata's temporary-file form is never deleted
        #expect(!FileManager.default.fileExists(atPath: stale.path))
        #expect(FileManager.default.fileExists(atPath: fresh.path))
        #expect(FileManager.default.fileExists(atPath: foreign.path))
        #expect(events.count(of: .staleFilesRemoved) == 1)
    }

    @Test(arguments: TestStore.engines)
    func writesLeaveNoTemporaryFiles(_ engine: Engine) throws {
        let cache = try makeCache(folder, durability: .fsync, engine: engine)

        for index in 0..<5 { try cache.setValue(Data(count: index * 100), forKey: "k\(index)") }

        #expect(allFiles(under: folder.store.appendingPathComponent("tmp")).isEmpty)
        #expect(try cache.value(forKey: "k4") == Data(count: 400))
    }

    @Test(arguments: TestStore.engines)
    func storeFolderDeletedWhileOpenIsRecreatedWithTheSameEpoch(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        try cache.setValue(Data([1]), forKey: "before")
        let storage = EngineStorage(folder, engine)
        let salt = try storage.epochSalt()

        try FileManager.default.removeItem(at: folder.store)
        try cache.setValue(Data([2]), forKey: "after")

        #expect(try cache.value(forKey: "after") == Data([2]))
        #expect(try cache.value(forKey: "before") == nil)
        #expect(try storage.epochSalt() == salt)
        let reopened = try makeCache(folder, engine: engine)
        #expect(try reopened.value(forKey: "after") == Data([2]))
    }

    @Test(arguments: TestStore.engines)
    func readsOfADeletedStoreAreMisses(_ engine: Engine) throws {
        let clock = ManualClock()
        let cache = try makeCache(folder, clock: clock, engine: engine)
        try cache.setValue(Data([1]), forKey: "k")

        try FileManager.default.removeItem(at: folder.store)
        // The SQLite engine's reads look at the database's path once a second (its writes at every write).
        clock.advance(by: 1)

        #expect(try cache.value(forKey: "k") == nil)
        try cache.removeEntry(forKey: "k")
    }

    @Test(arguments: TestStore.engines)
    func flushingCountersNeverRecreatesADeletedStore(_ engine: Engine) throws {
        do {
            let cache = try makeCache(folder, engine: engine)
            _ = try cache.value(forKey: "k")
            try FileManager.default.removeItem(at: folder.store)
            try cache.flushStatistics()
            #expect(cache.statistics.misses == 1)
        }

        #expect(!FileManager.default.fileExists(atPath: folder.store.path))
    }

    // MARK: - Per-key locks

    @Test(arguments: TestStore.engines)
    func withLockExcludesAnotherInstanceForTheSameKeyOnly(_ engine: Engine) throws {
        let first = try makeCache(folder, engine: engine)
        let second = try makeCache(folder, engine: engine)

        let observed = try first.withLock(forKey: "job") {
            (
                same: try second.withLockIfAvailable(forKey: "job") { "taken" },
                other: try second.withLockIfAvailable(forKey: "other job") { "taken" }
            )
        }
        let afterRelease = try second.withLockIfAvailable(forKey: "job") { "taken" }

        #expect(observed.same == nil)
        #expect(observed.other == "taken")
        #expect(afterRelease == "taken")
        #expect(FileManager.default.fileExists(atPath: folder.store.appendingPathComponent("locks").path))
    }

    @Test(arguments: TestStore.engines)
    func withLockReturnsTheBodysResultAndReleasesOnThrow(_ engine: Engine) throws {
        struct Boom: Error {}
        let cache = try makeCache(folder, engine: engine)

        #expect(throws: Boom.self) { try cache.withLock(forKey: "k") { throw Boom() } }
        let value = try cache.withLockIfAvailable(forKey: "k") { 42 }

        #expect(value == 42)
    }

    // MARK: - Concurrency

    @Test(arguments: TestStore.engines)
    func concurrentReadersAndWritersOnTwoInstancesSeeWholeValues(_ engine: Engine) async throws {
        let first = try makeCache(folder, countLimit: 40, engine: engine)
        let second = try makeCache(folder, countLimit: 40, engine: engine)
        let values = (0..<8).map { Data(repeating: UInt8($0), count: 2000 + $0) }

        try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var wholeReads = 0
                    let cache = worker.isMultiple(of: 2) ? first : second
                    for round in 0..<25 {
                        let key = "k\((worker + round) % 12)"
                        try await cache.setEntry(CacheEntry(value: values[worker]), forKey: key)
                        if let read = try await cache.entry(forKey: "k\(round % 12)")?.value {
                            #expect(values.contains(read))
                            wholeReads += 1
                        }
                    }
                    return wholeReads
                }
            }
            var total = 0
            for try await reads in group { total += reads }
            #expect(total > 0)
        }
        #expect(first.count <= 40)
        #expect(allFiles(under: folder.store.appendingPathComponent("tmp")).isEmpty)
    }
}

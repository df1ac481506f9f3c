import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a SQLite store's files are protected by: owner-only modes everywhere (which Linux can check), and a
/// Data Protection class asked for on every folder and on the database (DataProtection.swift; Linux has no
/// classes, so the recorder shows what would be set on iOS). The `-wal`, `-shm`, large-value, lock and
/// key-check files take their class from the folder they are created in.
@Suite struct SQLiteEngineProtectionTests {
    let folder = TemporaryFolder()
    let large = Data(repeating: 7, count: DiskCacheConfiguration.Engine.sqliteRowLimit + 1_000)

    func makeCache(_ protection: DiskCacheConfiguration.FileProtection) throws -> DiskCache<String, Data> {
        var configuration = DiskCacheConfiguration(
            name: "tests", directory: folder.store, masterKeySource: .masterKey(TestKeys.primary),
            clock: ManualClock(), engine: .sqlite)
        configuration.fileProtection = protection
        return try DiskCache(configuration: configuration)
    }

    /// Every item under the store folder (not following links): its path, and whether it is a folder.
    func items() -> [(path: String, isFolder: Bool)] {
        let root = folder.store.path
        let names = FileManager.default.enumerator(atPath: root)?.compactMap { $0 as? String } ?? []
        return names.sorted().map { name in
            var info = stat()
            _ = lstat(root + "/" + name, &info)
            return (root + "/" + name, info.st_mode & S_IFMT == S_IFDIR)
        }
    }

    /// Stores a row value and a large value, and takes a key's lock: every kind of file the engine makes.
    func fill(_ cache: DiskCache<String, Data>) throws {
        try cache.setValue(Data("small".utf8), forKey: "small")
        try cache.setValue(large, forKey: "large")
        _ = try cache.withLock(forKey: "small") { () -> Void in }
    }

    @Test func databaseWALSharedMemoryAndLargeFilesAreOwnerOnlyAndFoldersPrivate() throws {
        // Given a store with a row, a large value and a lock file, its connections still open
        let cache = try makeCache(.completeUntilFirstUserAuthentication)
        try fill(cache)

        // Then the database, its -wal and -shm and the large file are there
        let root = folder.store.path
        let all = items()
        let database = SQLiteEngine.databaseName
        for name in [database, database + "-wal", database + "-shm"] {
            #expect(all.contains { $0.path == root + "/" + name }, "\(name) is missing")
        }
        #expect(all.contains { $0.path.hasPrefix(root + "/large/") && !$0.isFolder }, "no large-value file")

        // And every file is owner-only, every folder (the store folder too) owner-only
        var rootInfo = stat()
        #expect(lstat(root, &rootInfo) == 0)
        #expect(rootInfo.st_mode & 0o777 == 0o700, "the store folder")
        for item in all {
            var info = stat()
            #expect(lstat(item.path, &info) == 0)
            #expect(info.st_mode & 0o777 == (item.isFolder ? 0o700 : 0o600), "\(item.path)")
        }
        withExtendedLifetime(cache) {}
    }

    @Test(arguments: [
        DiskCacheConfiguration.FileProtection.complete, .completeUnlessOpen, .completeUntilFirstUserAuthentication,
        .none,
    ])
    func everyFolderAndTheDatabaseAskForTheConfiguredClass(_ protection: DiskCacheConfiguration.FileProtection) throws {
        // Given a new store, opened and filled while the class requests are recorded
        let recorder = DataProtection.Recorder()
        let cache = try DataProtection.$recorder.withValue(recorder) {
            let cache = try makeCache(protection)
            try fill(cache)
            return cache
        }

        // Then the store folder, tmp/, large/, locks/ and the database asked for the configured class
        let root = cache.sqliteEngine.layout.root
        let asked = Set(recorder.applied.map(\.path))
        let expected = Set(
            [root, root + "/tmp", root + "/large", root + "/locks", root + "/" + SQLiteEngine.databaseName])
        #expect(asked == expected)
        #expect(recorder.applied.allSatisfy { $0.protection == protection })

        // And every other file was created in one of those folders, so it inherits the class: the -wal and -shm
        // in the store folder, the large file in tmp/ (renamed into large/), the key-check record, the lock file
        for item in items() where !item.isFolder {
            let parent = (item.path as NSString).deletingLastPathComponent
            #expect(asked.contains(parent), "\(item.path) is in a folder that asked for no class")
        }
    }

    @Test func anExistingStoreAsksForItsFoldersClassAgainAndLeavesItsDatabaseAlone() throws {
        // Given a store that exists
        try fill(try makeCache(.completeUntilFirstUserAuthentication))

        // When it is opened again with another class
        let recorder = DataProtection.Recorder()
        let cache = try DataProtection.$recorder.withValue(recorder) { try makeCache(.complete) }

        // Then its folders ask for the new class (files created from now on get it), and the database, which is
        // not created again, is not opened for it: closing a descriptor of it would drop SQLite's locks
        let root = cache.sqliteEngine.layout.root
        #expect(Set(recorder.applied.map(\.path)) == [root, root + "/tmp", root + "/large", root + "/locks"])
        #expect(recorder.applied.allSatisfy { $0.protection == .complete })
    }

    @Test func aStoreMadeAgainAfterDeletionFromOutsideAsksForItsClassAgain() throws {
        // Given an open store whose folder is deleted from outside
        let cache = try makeCache(.completeUnlessOpen)
        try fill(cache)
        try FileManager.default.removeItem(at: folder.store)

        // When an entry is written (which makes the store again)
        let recorder = DataProtection.Recorder()
        try DataProtection.$recorder.withValue(recorder) { try cache.setValue(Data("again".utf8), forKey: "k") }

        // Then the new folders and database asked for the class, as at the first open
        let root = cache.sqliteEngine.layout.root
        #expect(
            Set(recorder.applied.map(\.path))
                == [root, root + "/tmp", root + "/large", root + "/locks", root + "/" + SQLiteEngine.databaseName])
        #expect(recorder.applied.allSatisfy { $0.protection == .completeUnlessOpen })
        #expect(try cache.value(forKey: "k") == Data("again".utf8))
    }
}

/// A read-only store keeps the classes it has: changing one is a write (and a read-only volume refuses it).
@Suite(.enabled(if: Mounts.available, Comment(rawValue: Mounts.requirement)))
struct SQLiteEngineReadOnlyProtectionTests {
    let folder = TemporaryFolder()

    @Test func aReadOnlyStoreAsksForNoClass() throws {
        // Given a SQLite store, seen through a read-only mount
        let writer = try makeSQLiteCache(folder)
        try writer.setValue(Data("kept".utf8), forKey: "a")
        let view = folder.url.appendingPathComponent("readonly", isDirectory: true)
        try FileManager.default.createDirectory(at: view, withIntermediateDirectories: true)
        let mount = try Mounts.bindReadOnly(folder.store, at: view)
        defer { mount.unmount() }

        // When it is opened there and read, while the class requests are recorded
        let recorder = DataProtection.Recorder()
        let value = try DataProtection.$recorder.withValue(recorder) { () -> Data? in
            let cache = try DiskCache<String, Data>(
                configuration: DiskCacheConfiguration(
                    name: "tests", directory: view, masterKeySource: .masterKey(TestKeys.primary),
                    clock: ManualClock(), engine: .sqlite))
            return try cache.value(forKey: "a")
        }

        // Then it reads, and nothing asked for a class
        #expect(value == Data("kept".utf8))
        #expect(recorder.applied.isEmpty, "\(recorder.applied.map(\.path))")
    }
}

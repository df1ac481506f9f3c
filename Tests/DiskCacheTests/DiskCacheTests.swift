import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

private struct Profile: Codable, Hashable, Sendable {
    var name: String
    var visits: Int
}

@Suite struct DiskCacheTests {
    let folder = TemporaryFolder()

    // MARK: - Round trips

    @Test(arguments: TestStore.engines)
    func roundTripsDataValues(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        let value = Data((0..<1000).map { UInt8($0 % 251) })

        try cache.setValue(value, forKey: "blob")

        #expect(try cache.value(forKey: "blob") == value)
        #expect(try cache.value(forKey: "absent") == nil)
    }

    @Test(arguments: TestStore.engines)
    func roundTripsCodableValuesThroughTheConvenienceInitializer(_ engine: Engine) throws {
        let cache = try DiskCache<String, Profile>(configuration: makeConfiguration(folder, engine: engine))

        try cache.setValue(Profile(name: "Ada", visits: 3), forKey: "ada")

        #expect(try cache.value(forKey: "ada") == Profile(name: "Ada", visits: 3))
    }

    @Test(arguments: TestStore.engines)
    func emptyDataIsAHit(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)

        try cache.setValue(Data(), forKey: "empty")

        #expect(try cache.value(forKey: "empty") == Data())
        #expect(cache.statistics.hits == 1)
    }

    @Test(arguments: TestStore.engines)
    func entryKeepsItsExpiryAndCost(_ engine: Engine) throws {
        let clock = ManualClock()
        let cache = try makeCache(folder, clock: clock, engine: engine)
        let expiresAt = clock.now.addingTimeInterval(123.456)

        try cache.setEntry(CacheEntry(value: Data([1]), expiresAt: expiresAt, cost: 42), forKey: "k")

        let entry = try cache.entry(forKey: "k")
        #expect(entry?.expiresAt == expiresAt)
        #expect(entry?.cost == 42)
    }

    @Test(arguments: TestStore.engines)
    func overwriteReplacesTheValue(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)

        try cache.setValue(Data("one".utf8), forKey: "k")
        try cache.setValue(Data("two".utf8), forKey: "k")

        #expect(try cache.value(forKey: "k") == Data("two".utf8))
        #expect(try EngineStorage(folder, engine).count() == 1)
    }

    @Test(arguments: TestStore.engines)
    func removeEntryDeletesTheFile(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        try cache.setValue(Data([1]), forKey: "a")
        try cache.setValue(Data([2]), forKey: "b")

        try cache.removeEntry(forKey: "a")

        #expect(try cache.value(forKey: "a") == nil)
        #expect(try cache.value(forKey: "b") == Data([2]))
        #expect(try EngineStorage(folder, engine).count() == 1)
    }

    @Test(arguments: TestStore.engines)
    func removeAllDeletesEveryEntryAndKeepsWorking(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        for index in 0..<5 { try cache.setValue(Data([UInt8(index)]), forKey: "k\(index)") }

        try cache.removeAll()

        #expect(try EngineStorage(folder, engine).count() == 0)
        #expect(try cache.value(forKey: "k1") == nil)
        try cache.setValue(Data([9]), forKey: "k1")
        #expect(try cache.value(forKey: "k1") == Data([9]))
        #expect(cache.count == 1)
    }

    @Test(arguments: TestStore.engines)
    func asyncMethodsMatchTheSynchronousOnes(_ engine: Engine) async throws {
        let cache = try makeCache(folder, engine: engine)

        try await cache.setEntry(CacheEntry(value: Data("v".utf8)), forKey: "k")
        let hit = try await cache.entry(forKey: "k")
        try await cache.removeEntry(forKey: "k")
        let afterRemove = try await cache.entry(forKey: "k")
        try await cache.setEntry(CacheEntry(value: Data("w".utf8)), forKey: "w")
        try await cache.removeAll()
        let afterWipe = try await cache.entry(forKey: "w")

        #expect(hit?.value == Data("v".utf8))
        #expect(afterRemove == nil)
        #expect(afterWipe == nil)
    }

    @Test(arguments: TestStore.engines)
    func usableAsAnyCache(_ engine: Engine) async throws {
        let cache: any Cache<String, Data> = try makeCache(folder, engine: engine)

        try await cache.setValue(Data([7]), forKey: "k", expiry: .never)

        #expect(try await cache.value(forKey: "k") == Data([7]))
    }

    // MARK: - Codec failures

    @Test(arguments: TestStore.engines)
    func encodeFailureIsACodecErrorAndKeepsTheStoredEntry(_ engine: Engine) throws {
        struct Refused: Error {}
        let codec = ValueCodec<String>(
            encode: { value in
                if value == "bad" { throw Refused() }
                return Data(value.utf8)
            },
            decode: { String(decoding: $0, as: UTF8.self) })
        let cache = try DiskCache<String, String>(
            configuration: makeConfiguration(folder, engine: engine), codec: codec)
        try cache.setValue("good", forKey: "k")

        let error = #expect(throws: CacheError.self) { try cache.setValue("bad", forKey: "k") }

        #expect(error?.code == .codec)
        #expect(try cache.value(forKey: "k") == "good")
    }

    @Test(arguments: TestStore.engines)
    func decodeFailureIsACodecErrorAndKeepsTheFile(_ engine: Engine) throws {
        struct Refused: Error {}
        let codec = ValueCodec<String>(encode: { Data($0.utf8) }, decode: { _ in throw Refused() })
        let cache = try DiskCache<String, String>(
            configuration: makeConfiguration(folder, engine: engine), codec: codec)
        try cache.setValue("stored", forKey: "k")

        let error = #expect(throws: CacheError.self) { try cache.value(forKey: "k") }

        #expect(error?.code == .codec)
        #expect(try EngineStorage(folder, engine).count() == 1)
    }

    // MARK: - Expiry

    @Test(arguments: TestStore.engines)
    func expiredEntryIsAMissAndIsRemoved(_ engine: Engine) throws {
        let clock = ManualClock()
        let cache = try makeCache(folder, clock: clock, engine: engine)
        try cache.setValue(Data([1]), forKey: "k", expiry: .seconds(10))

        clock.advance(by: 9.999)
        let beforeExpiry = try cache.value(forKey: "k")
        clock.advance(by: 0.001)
        let atExpiry = try cache.value(forKey: "k")

        #expect(beforeExpiry == Data([1]))
        #expect(atExpiry == nil)
        #expect(try EngineStorage(folder, engine).count() == 0)
        #expect(cache.statistics.expirations == 1)
    }

    @Test(arguments: TestStore.engines)
    func expiryHoldsAfterReopening(_ engine: Engine) throws {
        let clock = ManualClock()
        do {
            let cache = try makeCache(folder, clock: clock, engine: engine)
            try cache.setValue(Data([1]), forKey: "short", expiry: .seconds(5))
            try cache.setValue(Data([2]), forKey: "long", expiry: .seconds(50))
        }

        clock.advance(by: 6)
        let reopened = try makeCache(folder, clock: clock, engine: engine)

        #expect(try reopened.value(forKey: "short") == nil)
        #expect(try reopened.value(forKey: "long") == Data([2]))
    }

    @Test(arguments: TestStore.engines)
    func defaultExpiryAppliesWhenNoneIsGiven(_ engine: Engine) throws {
        let clock = ManualClock()
        var configuration = makeConfiguration(folder, clock: clock, engine: engine)
        configuration.defaultExpiry = .seconds(30)
        let cache = try DiskCache<String, Data>(configuration: configuration)

        try cache.setValue(Data([1]), forKey: "k")

        #expect(try cache.entry(forKey: "k")?.expiresAt == clock.now.addingTimeInterval(30))
    }

    @Test(arguments: TestStore.engines)
    func alreadyExpiredWriteRemovesTheEarlierEntry(_ engine: Engine) throws {
        let clock = ManualClock()
        let cache = try makeCache(folder, clock: clock, engine: engine)
        try cache.setValue(Data([1]), forKey: "k")

        try cache.setEntry(CacheEntry(value: Data([2]), expiresAt: clock.now), forKey: "k")

        #expect(try cache.value(forKey: "k") == nil)
        #expect(try EngineStorage(folder, engine).count() == 0)
    }

    @Test(arguments: TestStore.engines)
    func removeExpiredSweepsOnlyExpiredEntries(_ engine: Engine) throws {
        let clock = ManualClock()
        let cache = try makeCache(folder, clock: clock, engine: engine)
        try cache.setValue(Data([1]), forKey: "a", expiry: .seconds(1))
        try cache.setValue(Data([2]), forKey: "b", expiry: .seconds(2))
        try cache.setValue(Data([3]), forKey: "c", expiry: .seconds(100))
        try cache.setValue(Data([4]), forKey: "d", expiry: .never)

        clock.advance(by: 2)
        let removed = try cache.removeExpired()

        #expect(removed == 2)
        #expect(try EngineStorage(folder, engine).count() == 2)
        #expect(try cache.value(forKey: "c") == Data([3]))
        #expect(cache.statistics.expirations == 2)
    }

    @Test(arguments: TestStore.engines)
    func backwardClockJumpDoesNotReviveARemovedEntry(_ engine: Engine) throws {
        let clock = ManualClock()
        let cache = try makeCache(folder, clock: clock, engine: engine)
        try cache.setValue(Data([1]), forKey: "k", expiry: .seconds(10))
        clock.advance(by: 20)
        #expect(try cache.value(forKey: "k") == nil)

        clock.advance(by: -20)

        #expect(try cache.value(forKey: "k") == nil)
    }

    // MARK: - Persistence and statistics

    @Test(arguments: TestStore.engines)
    func secondInstanceReadsTheFirstOnesEntries(_ engine: Engine) throws {
        let first = try makeCache(folder, engine: engine)
        let second = try makeCache(folder, engine: engine)

        try first.setValue(Data("from first".utf8), forKey: "a")
        try second.setValue(Data("from second".utf8), forKey: "b")

        #expect(try second.value(forKey: "a") == Data("from first".utf8))
        #expect(try first.value(forKey: "b") == Data("from second".utf8))
    }

    @Test(arguments: TestStore.engines)
    func countersPersistAcrossInstances(_ engine: Engine) throws {
        do {
            let cache = try makeCache(folder, engine: engine)
            try cache.setValue(Data([1]), forKey: "k")
            _ = try cache.value(forKey: "k")
            _ = try cache.value(forKey: "k")
            _ = try cache.value(forKey: "absent")
        }

        let reopened = try makeCache(folder, engine: engine)
        _ = try reopened.value(forKey: "k")
        let statistics = reopened.statistics

        #expect(statistics.hits == 3)
        #expect(statistics.misses == 1)
        #expect(statistics.insertions == 1)
        #expect(reopened.count == 1)
    }

    @Test(arguments: TestStore.engines)
    func flushedCountersAreNotCountedTwice(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        try cache.setValue(Data([1]), forKey: "k")
        _ = try cache.value(forKey: "k")

        try cache.flushStatistics()
        try cache.flushStatistics()

        #expect(cache.statistics.hits == 1)
        #expect(cache.statistics.insertions == 1)
    }

    @Test(arguments: TestStore.engines)
    func statisticsReportBytesOnDiskAfterOverwritesAndRestart(_ engine: Engine) throws {
        do {
            let cache = try makeCache(folder, engine: engine)
            try cache.setValue(Data(count: 100), forKey: "a")
            try cache.setValue(Data(count: 5000), forKey: "a")
            try cache.setValue(Data(count: 10), forKey: "b")
            #expect(try cache.totalBytes == EngineStorage(folder, engine).bytes())
            #expect(cache.count == 2)
        }

        let reopened = try makeCache(folder, engine: engine)

        #expect(try reopened.totalBytes == EngineStorage(folder, engine).bytes())
        #expect(reopened.totalBytes == 2 * EntryRecord.overhead + 2 + 5000 + 10)
        #expect(reopened.count == 2)
    }

    @Test(arguments: TestStore.engines)
    func listEntriesReturnsLiveEntriesWithKeysSizesAndExpiry(_ engine: Engine) throws {
        let clock = ManualClock()
        let cache = try makeCache(folder, clock: clock, engine: engine)
        try cache.setValue(Data(count: 10), forKey: "old", expiry: .seconds(100))
        clock.advance(by: 1)
        try cache.setValue(Data(count: 20), forKey: "new")
        try cache.setValue(Data(count: 30), forKey: "gone", expiry: .seconds(1))
        clock.advance(by: 1)

        let entries = try cache.listEntries()

        #expect(entries.map(\.key) == ["old", "new"])
        #expect(entries.map(\.size) == [EntryRecord.overhead + 3 + 10, EntryRecord.overhead + 3 + 20])
        #expect(entries[0].expiresAt == clock.now.addingTimeInterval(98))
        #expect(entries[1].expiresAt == nil)
        #expect(entries[1].lastAccess == clock.now.addingTimeInterval(-1))
    }

    // MARK: - Configuration

    @Test(arguments: TestStore.engines, [(-1, nil), (nil, -1)] as [(byteLimit: Int?, countLimit: Int?)])
    func negativeLimitIsRejected(_ engine: Engine, limits: (byteLimit: Int?, countLimit: Int?)) throws {
        let error = #expect(throws: CacheError.self) {
            try makeCache(folder, byteLimit: limits.byteLimit, countLimit: limits.countLimit, engine: engine)
        }
        #expect(error?.code == .invalidArgument)
    }

    @Test(arguments: TestStore.engines)
    func aMasterKeyFileInsideTheStoreFolderIsRejectedBeforeAnythingIsCreated(_ engine: Engine) throws {
        // Given a configuration whose master key file would sit beside the ciphertext it seals
        let keyFile = folder.store.appendingPathComponent("keys/store.key")
        let configuration = DiskCacheConfiguration(
            name: "tests", directory: folder.store, masterKeySource: .masterKeyFile(keyFile), engine: engine)

        // When the store is opened, then it is refused and no key file is written
        let error = #expect(throws: CacheError.self) { try DiskCache<String, Data>(configuration: configuration) }
        #expect(error?.code == .invalidArgument)
        #expect(!FileManager.default.fileExists(atPath: keyFile.path))
    }

    @Test(arguments: TestStore.engines)
    func aStoreNameWithAControlCharacterIsQuotedEscaped(_ engine: Engine) throws {
        let configuration = DiskCacheConfiguration(
            name: "a\u{0}b", masterKeySource: .masterKey(TestKeys.primary), engine: engine)
        let error = #expect(throws: CacheError.self) { try DiskCache<String, Data>(configuration: configuration) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("'a\\u{0}b'") == true)
        #expect(error?.message.contains("\u{0}") == false)
    }

    @Test func defaultDirectoryFollowsXDGCacheHome() throws {
        let configuration = DiskCacheConfiguration(name: "thumbs", masterKeySource: .masterKey(TestKeys.primary))
        let expected = DiskCacheLocation.cachesFolder()
            .appendingPathComponent("Strata").appendingPathComponent("thumbs")

        #expect(configuration.resolvedDirectory.path == expected.path)
        if let xdg = ProcessInfo.processInfo.environment["XDG_CACHE_HOME"], xdg.hasPrefix("/") {
            #expect(expected.path == URL(fileURLWithPath: xdg).appendingPathComponent("Strata/thumbs").path)
        } else {
            #expect(expected.path.hasSuffix("/.cache/Strata/thumbs"))
        }
    }

    @Test(arguments: TestStore.engines)
    func storeFoldersAndFilesAreOwnerOnly(_ engine: Engine) throws {
        let cache = try makeCache(folder, engine: engine)
        try cache.setValue(Data([1]), forKey: "k")
        // (one too large for a row of the SQLite engine, which keeps it in a file of its own)
        try cache.setValue(Data(count: Engine.sqliteRowLimit), forKey: "large")
        try cache.flushStatistics()

        let files = allFiles(under: folder.store)
        #expect(files.contains { $0.hasPrefix(engine == .sqlite ? "large/" : "entries/") })
        for file in files {
            let attributes = try FileManager.default.attributesOfItem(
                atPath: folder.store.appendingPathComponent(file).path)
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "\(file)")
        }
        for sub in ["", "tmp", engine == .sqlite ? "large" : "entries", "locks"] {
            let attributes = try FileManager.default.attributesOfItem(
                atPath: folder.store.appendingPathComponent(sub).path)
            #expect((attributes[.posixPermissions] as? Int) == 0o700, "\(sub)")
        }
    }
}

import CacheCore
import CacheTesting
import Foundation
import SealedRecord
import StrataTestSupport
import Testing

@testable import DiskCache

/// Every storage engine behind `DiskCache`'s seam, for the contract tests (STYLE.md #20). The SQLite
/// engine joins this list when it lands.
enum EngineKind: String, CaseIterable, Sendable, CustomStringConvertible {
    /// Today's file-per-entry engine.
    case file
    /// The SQLite engine.
    case sqlite
    /// The dictionary-backed test double.
    case inMemory

    var description: String { rawValue }

    /// A fresh, empty engine of this kind in `folder` (unused by the in-memory engine).
    func makeEngine(
        _ folder: TemporaryFolder, clock: ManualClock, byteLimit: Int? = nil, countLimit: Int? = nil
    ) throws -> any StorageEngine {
        let configuration = makeConfiguration(folder, byteLimit: byteLimit, countLimit: countLimit, clock: clock)
        switch self {
        case .file: return try FileEngine(configuration: configuration)
        case .sqlite: return try SQLiteEngine(configuration: configuration)
        case .inMemory: return InMemoryEngine(configuration: configuration)
        }
    }
}

/// The engine contract (Internal/Engine/StorageEngine.swift), run against every ``EngineKind``: the
/// promises `DiskCache` relies on, stated once, so a new engine proves itself by joining the arguments.
@Suite struct StorageEngineContractTests {
    let folder = TemporaryFolder()
    let clock = ManualClock()

    /// The size a record takes as every engine counts it: the sealed record's.
    func size(key: String, valueCount: Int) -> Int {
        EntryRecord.overhead + Data(key.utf8).count + valueCount
    }

    func write(_ engine: any StorageEngine, _ key: String, _ value: Data, expiresAt: Date? = nil) throws {
        try engine.write(
            keyBytes: Data(key.utf8), valueBytes: value, expiresAt: expiresAt, cost: nil, staleUntil: nil,
            hasTags: false)
    }

    func read(_ engine: any StorageEngine, _ key: String) throws -> Data? {
        try engine.read(keyBytes: Data(key.utf8))?.valueBytes
    }

    // MARK: - Records

    @Test(arguments: EngineKind.allCases)
    func readsBackWhatWasWrittenWithItsMetadata(_ kind: EngineKind) throws {
        // Given an engine
        let engine = try kind.makeEngine(folder, clock: clock)
        let expiresAt = clock.now.addingTimeInterval(3_600)

        // When a record is written with an expiry and a cost
        try engine.write(
            keyBytes: Data("k".utf8), valueBytes: Data("value".utf8), expiresAt: expiresAt, cost: 7, staleUntil: nil,
            hasTags: false)

        // Then a read returns its bytes and its metadata, and another key misses
        let record = try #require(try engine.read(keyBytes: Data("k".utf8)))
        #expect(record.keyBytes == Data("k".utf8))
        #expect(record.valueBytes == Data("value".utf8))
        #expect(record.header.expiresAt == expiresAt)
        #expect(record.header.cost == 7)
        #expect(try engine.read(keyBytes: Data("other".utf8)) == nil)
    }

    @Test(arguments: EngineKind.allCases)
    func replacingARecordReplacesItsValueAndItsSize(_ kind: EngineKind) throws {
        let engine = try kind.makeEngine(folder, clock: clock)
        try write(engine, "k", Data(count: 10))

        try write(engine, "k", Data(repeating: 1, count: 300))

        #expect(try read(engine, "k") == Data(repeating: 1, count: 300))
        #expect(engine.totals().count == 1)
        #expect(engine.totals().bytes == size(key: "k", valueCount: 300))
    }

    @Test(arguments: EngineKind.allCases)
    func removingARecordRemovesOnlyThatOne(_ kind: EngineKind) throws {
        let engine = try kind.makeEngine(folder, clock: clock)
        try write(engine, "a", Data("1".utf8))
        try write(engine, "b", Data("2".utf8))

        try engine.remove(keyBytes: Data("a".utf8))
        try engine.remove(keyBytes: Data("never-written".utf8))

        #expect(try read(engine, "a") == nil)
        #expect(try read(engine, "b") == Data("2".utf8))
        #expect(engine.totals().count == 1)
        #expect(engine.totals().bytes == size(key: "b", valueCount: 1))
    }

    @Test(arguments: EngineKind.allCases)
    func anExpiredRecordIsAMissAndIsRemoved(_ kind: EngineKind) throws {
        let engine = try kind.makeEngine(folder, clock: clock)
        try write(engine, "k", Data("v".utf8), expiresAt: clock.now.addingTimeInterval(60))

        clock.advance(by: 60)

        #expect(try read(engine, "k") == nil)
        #expect(engine.totals().count == 0)
        #expect(engine.statistics().expirations == 1)
    }

    @Test(arguments: EngineKind.allCases)
    func aStaleRecordIsReturnedOnlyToAReadThatAsksAndIsKept(_ kind: EngineKind) throws {
        let engine = try kind.makeEngine(folder, clock: clock)
        let expiresAt = clock.now.addingTimeInterval(60)
        try engine.write(
            keyBytes: Data("k".utf8), valueBytes: Data("v".utf8), expiresAt: expiresAt, cost: nil,
            staleUntil: expiresAt.addingTimeInterval(600), hasTags: false)

        clock.advance(by: 120)

        #expect(try engine.read(keyBytes: Data("k".utf8), includingStale: false) == nil)
        #expect(try engine.read(keyBytes: Data("k".utf8), includingStale: true)?.valueBytes == Data("v".utf8))
        #expect(engine.totals().count == 1)
    }

    @Test(arguments: EngineKind.allCases)
    func aWriteAlreadyExpiredStoresNothingAndRemovesTheEarlierRecord(_ kind: EngineKind) throws {
        let engine = try kind.makeEngine(folder, clock: clock)
        try write(engine, "k", Data("old".utf8))

        try write(engine, "k", Data("new".utf8), expiresAt: clock.now)

        #expect(try read(engine, "k") == nil)
        #expect(engine.totals().count == 0)
    }

    // MARK: - Listing and totals

    @Test(arguments: EngineKind.allCases)
    func verifyVisitsEveryLiveRecordWithItsSizeAndRemovesExpiredOnes(_ kind: EngineKind) throws {
        let engine = try kind.makeEngine(folder, clock: clock)
        try write(engine, "a", Data(count: 5))
        try write(engine, "bb", Data(count: 50))
        try write(engine, "gone", Data(count: 1), expiresAt: clock.now.addingTimeInterval(10))
        clock.advance(by: 10)

        var visited: [String: Int] = [:]
        let report = try engine.verify(progress: nil) { record, facts in
            visited[String(decoding: record.keyBytes, as: UTF8.self)] = facts.size
        }

        #expect(visited == ["a": size(key: "a", valueCount: 5), "bb": size(key: "bb", valueCount: 50)])
        #expect(report.checked == 3)
        #expect(report.issues.map(\.reason) == [DiskCacheVerifyReport.Issue.expiredReason])
        #expect(engine.totals().count == 2)
    }

    @Test(arguments: EngineKind.allCases)
    func totalsAreTheSumOverTheRecordsHeld(_ kind: EngineKind) throws {
        let engine = try kind.makeEngine(folder, clock: clock)
        let values = ["a": 1, "b": 1_000, "c": 4_096, "d": 0]

        for (key, count) in values { try write(engine, key, Data(count: count)) }
        try engine.remove(keyBytes: Data("b".utf8))

        #expect(engine.totals().count == 3)
        #expect(engine.totals().bytes == ["a", "c", "d"].reduce(0) { $0 + size(key: $1, valueCount: values[$1]!) })
    }

    @Test(arguments: EngineKind.allCases)
    func removeExpiredCountsWhatItRemoved(_ kind: EngineKind) throws {
        let engine = try kind.makeEngine(folder, clock: clock)
        try write(engine, "live", Data("v".utf8))
        try write(engine, "short", Data("v".utf8), expiresAt: clock.now.addingTimeInterval(5))
        try write(engine, "shorter", Data("v".utf8), expiresAt: clock.now.addingTimeInterval(1))
        clock.advance(by: 5)

        #expect(try engine.removeExpired() == 2)
        #expect(engine.totals().count == 1)
        #expect(try read(engine, "live") == Data("v".utf8))
    }

    // MARK: - Limits

    @Test(arguments: EngineKind.allCases)
    func trimRemovesTheLeastRecentlyUsedFirst(_ kind: EngineKind) throws {
        // Given a, b, c written ten seconds apart, then a read (which makes a the most recent)
        let engine = try kind.makeEngine(folder, clock: clock)
        for key in ["a", "b", "c"] {
            try write(engine, key, Data(key.utf8))
            clock.advance(by: 10)
        }
        _ = try read(engine, "a")

        // When trimmed to one record
        let removed = try engine.trim(toBytes: nil, toCount: 1)

        // Then b and c went, a stays
        #expect(removed == 2)
        #expect(try read(engine, "a") == Data("a".utf8))
        #expect(try read(engine, "b") == nil)
        #expect(try read(engine, "c") == nil)
    }

    @Test(arguments: EngineKind.allCases)
    func aWriteOverTheCountLimitTrimsToTheLowWaterMarkSparingItself(_ kind: EngineKind) throws {
        let engine = try kind.makeEngine(folder, clock: clock, countLimit: 10)
        for index in 0..<10 {
            try write(engine, "k\(index)", Data("v".utf8))
            clock.advance(by: 10)
        }

        try write(engine, "new", Data("v".utf8))

        #expect(engine.totals().count == engine.lowWater(10))
        #expect(try read(engine, "new") == Data("v".utf8))
        #expect(try read(engine, "k0") == nil)
        #expect(try read(engine, "k9") == Data("v".utf8))
    }

    @Test(arguments: EngineKind.allCases)
    func aRecordLargerThanTheByteLimitIsRefusedAndRemovesTheEarlierOne(_ kind: EngineKind) throws {
        let engine = try kind.makeEngine(folder, clock: clock, byteLimit: 1_000)
        try write(engine, "k", Data(count: 10))
        try write(engine, "other", Data(count: 10))

        let error = #expect(throws: CacheError.self) { try write(engine, "k", Data(count: 1_000)) }

        #expect(error?.code == .entryTooLarge)
        #expect(try read(engine, "k") == nil)
        #expect(try read(engine, "other") == Data(count: 10))
        #expect(engine.statistics().evictions == 0)
    }

    // MARK: - Wipe and tags

    @Test(arguments: EngineKind.allCases)
    func removeAllEndsEveryRecordAndTheStoreKeepsWorking(_ kind: EngineKind) throws {
        let engine = try kind.makeEngine(folder, clock: clock)
        for key in ["a", "b", "c"] { try write(engine, key, Data(key.utf8)) }

        try engine.removeAll()

        #expect(try ["a", "b", "c"].allSatisfy { try read(engine, $0) == nil })
        #expect(engine.totals().count == 0)
        #expect(engine.totals().bytes == 0)
        try write(engine, "a", Data("again".utf8))
        #expect(try read(engine, "a") == Data("again".utf8))
    }

    @Test(arguments: EngineKind.allCases)
    func aTaggedRecordLivesUntilItsTagIsAdvanced(_ kind: EngineKind) throws {
        let engine = try kind.makeEngine(folder, clock: clock)
        let versions = try engine.tagVersions(of: ["t"])
        let stamped = try #require(versions["t"])
        try engine.write(
            keyBytes: Data("k".utf8), valueBytes: try TagBlock.encode(versions) + Data("v".utf8), expiresAt: nil,
            cost: nil, staleUntil: nil, hasTags: true)

        let before = try engine.read(keyBytes: Data("k".utf8))
        try engine.advanceTagVersion(of: "t")

        // The counter was created at a fresh base (FenceCounter's rule) and advanced by one
        #expect(FenceCounter.baseRange.contains(stamped))
        #expect(before?.valueBytes == Data("v".utf8))
        #expect(before?.tags == ["t"])
        #expect(try engine.tagVersions(of: ["t"]) == ["t": stamped + 1])
        #expect(try read(engine, "k") == nil)
    }

    // MARK: - Through DiskCache

    @Test(arguments: EngineKind.allCases, CacheContract.Check.allCases)
    func aDiskCacheOnTheEngineKeepsTheCacheContract(_ kind: EngineKind, _ check: CacheContract.Check) async throws {
        let folder = self.folder
        try await CacheContract.verify(check) { clock in
            // A new store folder for each call, all inside this test's temporary folder.
            let configuration = DiskCacheConfiguration(
                name: "contract", directory: folder.url.appendingPathComponent(UUID().uuidString),
                masterKeySource: .masterKey(TestKeys.primary), clock: clock)
            let engine: any StorageEngine =
                switch kind {
                case .file: try FileEngine(configuration: configuration)
                case .sqlite: try SQLiteEngine(configuration: configuration)
                case .inMemory: InMemoryEngine(configuration: configuration)
                }
            return DiskCache<String, Data>(configuration: configuration, codec: .data, engine: engine)
        }
    }
}

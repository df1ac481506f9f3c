import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

/// Issue 17 on disk: a record keeps its stale retention in the header's once-reserved bytes, plain reads
/// never return a stale entry, the load path does, sweeps keep it until its stale-until instant, records
/// without it read as before, and a load with options on one `DiskCache` serves it under fail-safe.
@Suite struct DiskCacheStaleRetentionTests {
    let folder = TemporaryFolder()

    @Test(arguments: TestStore.engines)
    func aStaleEntryIsKeptForTheLoadPathOnlyUntilItsStaleInstant(_ engine: Engine) throws {
        let clock = ManualClock()
        let cache = try makeCache(folder, clock: clock, engine: engine)
        let now = clock.now
        try cache.setEntry(
            CacheEntry(value: Data("v".utf8), expiresAt: now + 10, staleUntil: now + 70), forKey: "k")
        #expect(try cache.entry(forKey: "k")?.staleUntil == now + 70)

        clock.advance(by: 30)
        #expect(try cache.value(forKey: "k") == nil)
        #expect(try cache.removeExpired() == 0)
        #expect(try cache.entryIncludingStale(forKey: "k")?.value == Data("v".utf8))
        #expect(try cache.entryIncludingStale(forKey: "k")?.expiresAt == now + 10)

        clock.advance(by: 40)
        #expect(try cache.entryIncludingStale(forKey: "k") == nil)
        #expect(try cache.removeExpired() == 0)  // the stale read above already removed it
        #expect(cache.count == 0)
    }

    @Test(arguments: [1.0, 65_535, 65_536, 200_000, 10_000_000])
    func theHeaderKeepsTheRetentionInSecondsOrMinutes(retention: TimeInterval) throws {
        let expiresAt = Date(timeIntervalSinceReferenceDate: 800_000_000)
        let header = EntryRecord.Header(
            epochID: 7, createdAt: expiresAt - 5, expiresAt: expiresAt, cost: nil, keyLength: 1, valueLength: 2,
            staleUntil: expiresAt + retention)
        var bytes = Data(count: EntryRecord.headerSize)
        bytes.withUnsafeMutableBytes { EntryRecord.encodeHeader(header, into: $0) }
        let parsed = try EntryRecord.parseHeader(bytes).get()
        let kept = try #require(parsed.staleUntil).timeIntervalSince(expiresAt)
        // Exact in seconds up to 65 535 s; then whole minutes, rounded up, capped at about 45 days
        let expected =
            retention <= 65_535
            ? retention : min((retention / 60).rounded(.up) * 60, EntryRecord.maximumStaleRetention)
        #expect(kept == expected)
        #expect(parsed.expiresAt == expiresAt)
    }

    @Test func aRecordWithoutStaleRetentionIsTheEarlierFormatByteForByte() throws {
        let expiresAt = Date(timeIntervalSinceReferenceDate: 800_000_000)
        let header = EntryRecord.Header(
            epochID: 7, createdAt: expiresAt - 5, expiresAt: expiresAt, cost: 3, keyLength: 1, valueLength: 2)
        var bytes = Data(count: EntryRecord.headerSize)
        bytes.withUnsafeMutableBytes { EntryRecord.encodeHeader(header, into: $0) }
        #expect(bytes[5] == EntryRecord.flagHasExpiry | EntryRecord.flagHasCost)
        #expect(bytes[6] == 0 && bytes[7] == 0)
        #expect(try EntryRecord.parseHeader(bytes).get().staleUntil == nil)
        // Reserved bytes set without the flag are still a bad header
        bytes[7] = 1
        #expect(throws: CorruptionReason.self) { try EntryRecord.parseHeader(bytes).get() }
    }

    @Test(arguments: TestStore.engines)
    func aLoadWithFailSafeOnOneDiskCacheServesTheStaleValue(_ engine: Engine) async throws {
        let clock = ManualClock()
        let cache = try makeCache(folder, clock: clock, engine: engine)
        let options = LoadOptions(failSafe: .init(maximumStaleness: .seconds(60), throttle: .seconds(5)))
        _ = try await cache.value(forKey: "k", expiry: .seconds(10), options: options) { Data("v1".utf8) }
        clock.advance(by: 20)
        struct Down: Error {}
        let runs = Locked(0)
        for _ in 0..<2 {
            let value = try await cache.value(forKey: "k", expiry: .seconds(10), options: options) {
                runs.withLock { $0 += 1 }
                throw Down()
            }
            #expect(value == Data("v1".utf8))
        }
        #expect(runs.value == 1)
        #expect(try await cache.value(forKey: "k") == nil)
        let loaded = try #require(try await cache.entryIncludingStale(forKey: "k"))
        #expect(loaded.staleUntil == loaded.expiresAt.map { $0 + 60 })
    }

    @Test(arguments: TestStore.engines)
    func aBatchOnOneDiskCacheLoadsOnlyTheMissingKeys(_ engine: Engine) async throws {
        let cache = try makeCache(folder, engine: engine)
        try await cache.setValue(Data("a".utf8), forKey: "a")
        let asked = Locked<[String]>([])
        let values = try await cache.values(forKeys: ["a", "b", "c"]) { missing in
            asked.withLock { $0 = missing.sorted() }
            return ["b": Data("B".utf8), "c": Data("C".utf8)]
        }
        #expect(asked.value == ["b", "c"])
        #expect(values == ["a": Data("a".utf8), "b": Data("B".utf8), "c": Data("C".utf8)])
        #expect(try await cache.value(forKey: "c") == Data("C".utf8))
    }
}

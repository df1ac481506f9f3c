import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import DiskCache

@Suite struct DiskCacheLimitTests {
    let folder = TemporaryFolder()

    /// Size on disk of an entry with a 2-byte key and a 100-byte value.
    let entrySize = EntryRecord.overhead + 2 + 100

    /// The keys that still read as hits, in order.
    private func liveKeys(_ cache: DiskCache<String, Data>, _ keys: [String]) throws -> [String] {
        // Reads touch recency, so the suite only calls this at the end of a test.
        try keys.filter { try cache.value(forKey: $0) != nil }
    }

    @Test(arguments: TestStore.engines)
    func entryLimitEvictsLeastRecentlyUsedAfterEveryWrite(_ engine: Engine) throws {
        // Given a store of at most 3 entries (low-water 80% → trims to 2)
        let clock = ManualClock()
        let cache = try makeCache(folder, countLimit: 3, clock: clock, engine: engine)
        for key in ["k1", "k2", "k3"] {
            try cache.setValue(Data(count: 100), forKey: key)
            clock.advance(by: 1)
            #expect(try EngineStorage(folder, engine).count() <= 3)
        }
        // When k1 is read (most recent now) and a fourth entry is written
        _ = try cache.value(forKey: "k1")
        clock.advance(by: 1)
        try cache.setValue(Data(count: 100), forKey: "k4")

        // Then the store was trimmed to 2: the new entry and the most recently used one
        #expect(try EngineStorage(folder, engine).count() == 2)
        #expect(try liveKeys(cache, ["k1", "k2", "k3", "k4"]) == ["k1", "k4"])
        #expect(cache.statistics.evictions == 2)
    }

    @Test(arguments: TestStore.engines, [(0, nil), (nil, 0)] as [(byteLimit: Int?, countLimit: Int?)])
    func aLimitOfZeroSetAtReopenEmptiesTheStoreAtOpen(
        _ engine: Engine, limits: (byteLimit: Int?, countLimit: Int?)
    ) throws {
        // Given three entries written with no limit
        let unlimited = try makeCache(folder, engine: engine)
        for key in ["k1", "k2", "k3"] { try unlimited.setValue(Data(count: 100), forKey: key) }

        // When the store is reopened with a limit of 0
        let empty = try makeCache(folder, byteLimit: limits.byteLimit, countLimit: limits.countLimit, engine: engine)

        // Then it keeps nothing before any write, and a write keeps nothing either
        #expect(try EngineStorage(folder, engine).count() == 0)
        #expect(try liveKeys(empty, ["k1", "k2", "k3"]).isEmpty)
        try empty.setValue(Data(count: 100), forKey: "k4")
        #expect(try EngineStorage(folder, engine).count() == 0)
    }

    @Test(arguments: TestStore.engines)
    func aSmallerLimitSetAtReopenIsAppliedAtOpen(_ engine: Engine) throws {
        // Given ten entries written with no limit, k0 the least recently used
        let clock = ManualClock()
        let unlimited = try makeCache(folder, clock: clock, engine: engine)
        for index in 0..<10 {
            try unlimited.setValue(Data(count: 10), forKey: "k\(index)")
            clock.advance(by: 1)
        }

        // When the store is reopened with a count limit of 5
        let limited = try makeCache(folder, countLimit: 5, clock: clock, engine: engine)

        // Then, before any write, it holds the low-water mark's worth (4), the most recently used
        #expect(limited.count == 4)
        #expect(try EngineStorage(folder, engine).count() == 4)
        #expect(try liveKeys(limited, (0..<10).map { "k\($0)" }) == ["k6", "k7", "k8", "k9"])
    }

    @Test(arguments: TestStore.engines)
    func byteLimitEvictsLeastRecentlyUsedAfterEveryWrite(_ engine: Engine) throws {
        let clock = ManualClock()
        let cache = try makeCache(folder, byteLimit: 3 * entrySize, clock: clock, engine: engine)
        for key in ["k1", "k2", "k3"] {
            try cache.setValue(Data(count: 100), forKey: key)
            clock.advance(by: 1)
        }
        #expect(try EngineStorage(folder, engine).bytes() == 3 * entrySize)
        _ = try cache.value(forKey: "k2")
        clock.advance(by: 1)

        try cache.setValue(Data(count: 100), forKey: "k4")

        // 80% of 3 entries' bytes holds 2 entries.
        #expect(try EngineStorage(folder, engine).bytes() == 2 * entrySize)
        #expect(cache.totalBytes == 2 * entrySize)
        #expect(try liveKeys(cache, ["k1", "k2", "k3", "k4"]) == ["k2", "k4"])
    }

    @Test(arguments: TestStore.engines)
    func overwriteIsCountedOnceAgainstTheLimits(_ engine: Engine) throws {
        let cache = try makeCache(folder, countLimit: 2, engine: engine)

        for _ in 0..<5 { try cache.setValue(Data(count: 100), forKey: "k1") }
        try cache.setValue(Data(count: 100), forKey: "k2")

        #expect(cache.count == 2)
        #expect(cache.statistics.evictions == 0)
        #expect(try cache.value(forKey: "k1") != nil)
    }

    @Test(arguments: TestStore.engines)
    func entryLargerThanTheByteLimitIsRefusedAndOthersStay(_ engine: Engine) throws {
        let cache = try makeCache(folder, byteLimit: 2 * entrySize, engine: engine)
        try cache.setValue(Data(count: 100), forKey: "k1")
        try cache.setValue(Data(count: 100), forKey: "k2")

        let error = #expect(throws: CacheError.self) {
            try cache.setValue(Data(count: 2 * entrySize), forKey: "k3")
        }

        #expect(error?.code == .entryTooLarge)
        #expect(try liveKeys(cache, ["k1", "k2", "k3"]) == ["k1", "k2"])
        #expect(cache.statistics.evictions == 0)
    }

    @Test(arguments: TestStore.engines)
    func refusedOversizedOverwriteRemovesTheStaleValue(_ engine: Engine) throws {
        let cache = try makeCache(folder, byteLimit: 2 * entrySize, engine: engine)
        try cache.setValue(Data(count: 100), forKey: "k1")
        try cache.setValue(Data(count: 100), forKey: "k2")

        #expect(throws: CacheError.self) { try cache.setValue(Data(count: 2 * entrySize), forKey: "k1") }

        #expect(try liveKeys(cache, ["k1", "k2"]) == ["k2"])
    }

    @Test(arguments: TestStore.engines)
    func valueLargerThanTheFormatAllowsIsRefusedAsTooLargeWithoutAByteLimit(_ engine: Engine) throws {
        // Given a store with no byte limit holding k1
        let cache = try makeCache(folder, engine: engine)
        try cache.setValue(Data(count: 100), forKey: "k1")
        // A body one byte over what AES-GCM may seal; the buffer is never written, so the pages stay unmapped.
        let count = EntryRecord.maxBodyLength - 1
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: count, alignment: 16)
        let huge = Data(bytesNoCopy: buffer, count: count, deallocator: .custom { pointer, _ in pointer.deallocate() })

        let error = #expect(throws: CacheError.self) { try cache.setValue(huge, forKey: "k1") }

        // Then it is refused as too large (not a crypto failure) and the earlier value is gone
        #expect(error?.code == .entryTooLarge)
        #expect(try cache.value(forKey: "k1") == nil)
    }

    @Test(arguments: TestStore.engines, [true, false])
    func aStoreExactlyAtItsLimitEvictsNothing(_ engine: Engine, limitingBytes: Bool) throws {
        // Given a limit of exactly two entries, in bytes or in entries
        let cache = try makeCache(
            folder, byteLimit: limitingBytes ? 2 * entrySize : nil, countLimit: limitingBytes ? nil : 2, engine: engine)

        // When two entries are written
        try cache.setValue(Data(count: 100), forKey: "k1")
        try cache.setValue(Data(count: 100), forKey: "k2")

        // Then the store is within its limit, not over it: nothing is evicted
        #expect(cache.statistics.evictions == 0)
        #expect(try liveKeys(cache, ["k1", "k2"]) == ["k1", "k2"])
    }

    @Test(arguments: TestStore.engines)
    func entryExactlyAtTheByteLimitIsKeptAlone(_ engine: Engine) throws {
        let cache = try makeCache(folder, byteLimit: entrySize, engine: engine)
        try cache.setValue(Data(count: 100), forKey: "k1")

        try cache.setValue(Data(count: 100), forKey: "k2")

        #expect(try liveKeys(cache, ["k1", "k2"]) == ["k2"])
    }

    @Test(arguments: TestStore.engines, [(0, nil), (nil, 0)] as [(byteLimit: Int?, countLimit: Int?)])
    func zeroLimitKeepsNothing(_ engine: Engine, limits: (byteLimit: Int?, countLimit: Int?)) throws {
        let cache = try makeCache(folder, byteLimit: limits.byteLimit, countLimit: limits.countLimit, engine: engine)

        try cache.setValue(Data([1]), forKey: "k")

        #expect(try cache.value(forKey: "k") == nil)
        #expect(try EngineStorage(folder, engine).count() == 0)
    }

    @Test func hitRecordsRecencyOnDiskOnlyWhenTheFileTimeIsAStepOld() throws {
        // Given an entry written at t0
        let clock = ManualClock()
        let cache = try makeCache(folder, clock: clock)
        try cache.setValue(Data([1]), forKey: "k")
        let path = try cache.entryPath(for: "k")
        let written = clock.now
        func fileTime() throws -> Date? {
            try FileManager.default.attributesOfItem(atPath: path)[.modificationDate] as? Date
        }

        // When it is read within the recency resolution, the file time is left alone (no metadata write)
        clock.advance(by: DiskStore.recencyResolution / 2)
        _ = try cache.value(forKey: "k")
        #expect(abs(try #require(try fileTime()).timeIntervalSince(written)) < 0.001)

        // When it is read a full step later, the hit is recorded in the file time
        clock.advance(by: DiskStore.recencyResolution)
        _ = try cache.value(forKey: "k")
        #expect(abs(try #require(try fileTime()).timeIntervalSince(clock.now)) < 0.001)
    }

    @Test(arguments: TestStore.engines)
    func recencySurvivesARestart(_ engine: Engine) throws {
        // Given entries written and read by one instance
        let clock = ManualClock()
        do {
            let cache = try makeCache(folder, clock: clock, engine: engine)
            for key in ["k1", "k2", "k3"] {
                try cache.setValue(Data(count: 100), forKey: key)
                clock.advance(by: 1)
            }
            _ = try cache.value(forKey: "k1")
            clock.advance(by: 1)
        }
        // When a new instance with a limit of 3 writes a fourth entry
        let reopened = try makeCache(folder, countLimit: 3, clock: clock, engine: engine)
        try reopened.setValue(Data(count: 100), forKey: "k4")

        // Then the least recently used ones (k2, k3) went, by the first instance's reads
        #expect(try liveKeys(reopened, ["k1", "k2", "k3", "k4"]) == ["k1", "k4"])
    }

    @Test(arguments: TestStore.engines)
    func trimToBytesRemovesLeastRecentlyUsed(_ engine: Engine) throws {
        let clock = ManualClock()
        let cache = try makeCache(folder, clock: clock, engine: engine)
        for key in ["k1", "k2", "k3", "k4"] {
            try cache.setValue(Data(count: 100), forKey: key)
            clock.advance(by: 1)
        }

        let removed = try cache.trim(toBytes: 2 * entrySize)

        #expect(removed == 2)
        #expect(try liveKeys(cache, ["k1", "k2", "k3", "k4"]) == ["k3", "k4"])
    }

    @Test(arguments: TestStore.engines)
    func trimCountsEntriesWrittenByAnotherInstance(_ engine: Engine) throws {
        let clock = ManualClock()
        let limited = try makeCache(folder, countLimit: 5, clock: clock, engine: engine)
        _ = limited.count  // builds the index before the other instance writes
        let other = try makeCache(folder, clock: clock, engine: engine)
        for index in 0..<10 {
            try other.setValue(Data(count: 10), forKey: "o\(index)")
            clock.advance(by: 1)
        }

        let removed = try limited.trim()

        #expect(removed == 6)
        #expect(try EngineStorage(folder, engine).count() == 4)
        #expect(limited.count == 4)
    }
}

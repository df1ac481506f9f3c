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

    @Test func entryLimitEvictsLeastRecentlyUsedAfterEveryWrite() throws {
        // Given a store of at most 3 entries (low-water 80% → trims to 2)
        let clock = ManualClock()
        let cache = try makeCache(folder, countLimit: 3, clock: clock)
        for key in ["k1", "k2", "k3"] {
            try cache.setValue(Data(count: 100), forKey: key)
            clock.advance(by: 1)
            #expect(entryFiles(folder).count <= 3)
        }
        // When k1 is read (most recent now) and a fourth entry is written
        _ = try cache.value(forKey: "k1")
        clock.advance(by: 1)
        try cache.setValue(Data(count: 100), forKey: "k4")

        // Then the store was trimmed to 2: the new entry and the most recently used one
        #expect(entryFiles(folder).count == 2)
        #expect(try liveKeys(cache, ["k1", "k2", "k3", "k4"]) == ["k1", "k4"])
        #expect(cache.statistics.evictions == 2)
    }

    @Test(arguments: [(0, nil), (nil, 0)] as [(Int?, Int?)])
    func aLimitOfZeroSetAtReopenEmptiesTheStoreAtOpen(byteLimit: Int?, countLimit: Int?) throws {
        // Given three entries written with no limit
        let unlimited = try makeCache(folder)
        for key in ["k1", "k2", "k3"] { try unlimited.setValue(Data(count: 100), forKey: key) }

        // When the store is reopened with a limit of 0
        let empty = try makeCache(folder, byteLimit: byteLimit, countLimit: countLimit)

        // Then it keeps nothing before any write, and a write keeps nothing either
        #expect(entryFiles(folder).isEmpty)
        #expect(try liveKeys(empty, ["k1", "k2", "k3"]).isEmpty)
        try empty.setValue(Data(count: 100), forKey: "k4")
        #expect(entryFiles(folder).isEmpty)
    }

    @Test func aSmallerLimitSetAtReopenIsAppliedAtOpen() throws {
        // Given ten entries written with no limit, k0 the least recently used
        let clock = ManualClock()
        let unlimited = try makeCache(folder, clock: clock)
        for index in 0..<10 {
            try unlimited.setValue(Data(count: 10), forKey: "k\(index)")
            clock.advance(by: 1)
        }

        // When the store is reopened with a count limit of 5
        let limited = try makeCache(folder, countLimit: 5, clock: clock)

        // Then, before any write, it holds the low-water mark's worth (4), the most recently used
        #expect(limited.count == 4)
        #expect(entryFiles(folder).count == 4)
        #expect(try liveKeys(limited, (0..<10).map { "k\($0)" }) == ["k6", "k7", "k8", "k9"])
    }

    @Test func byteLimitEvictsLeastRecentlyUsedAfterEveryWrite() throws {
        let clock = ManualClock()
        let cache = try makeCache(folder, byteLimit: 3 * entrySize, clock: clock)
        for key in ["k1", "k2", "k3"] {
            try cache.setValue(Data(count: 100), forKey: key)
            clock.advance(by: 1)
        }
        #expect(entryBytesOnDisk(folder) == 3 * entrySize)
        _ = try cache.value(forKey: "k2")
        clock.advance(by: 1)

        try cache.setValue(Data(count: 100), forKey: "k4")

        // 80% of 3 entries' bytes holds 2 entries.
        #expect(entryBytesOnDisk(folder) == 2 * entrySize)
        #expect(cache.totalBytes == 2 * entrySize)
        #expect(try liveKeys(cache, ["k1", "k2", "k3", "k4"]) == ["k2", "k4"])
    }

    @Test func overwriteIsCountedOnceAgainstTheLimits() throws {
        let cache = try makeCache(folder, countLimit: 2)

        for _ in 0..<5 { try cache.setValue(Data(count: 100), forKey: "k1") }
        try cache.setValue(Data(count: 100), forKey: "k2")

        #expect(cache.count == 2)
        #expect(cache.statistics.evictions == 0)
        #expect(try cache.value(forKey: "k1") != nil)
    }

    @Test func entryLargerThanTheByteLimitIsRefusedAndOthersStay() throws {
        let cache = try makeCache(folder, byteLimit: 2 * entrySize)
        try cache.setValue(Data(count: 100), forKey: "k1")
        try cache.setValue(Data(count: 100), forKey: "k2")

        let error = #expect(throws: CacheError.self) {
            try cache.setValue(Data(count: 2 * entrySize), forKey: "k3")
        }

        #expect(error?.code == .entryTooLarge)
        #expect(try liveKeys(cache, ["k1", "k2", "k3"]) == ["k1", "k2"])
        #expect(cache.statistics.evictions == 0)
    }

    @Test func refusedOversizedOverwriteRemovesTheStaleValue() throws {
        let cache = try makeCache(folder, byteLimit: 2 * entrySize)
        try cache.setValue(Data(count: 100), forKey: "k1")
        try cache.setValue(Data(count: 100), forKey: "k2")

        #expect(throws: CacheError.self) { try cache.setValue(Data(count: 2 * entrySize), forKey: "k1") }

        #expect(try liveKeys(cache, ["k1", "k2"]) == ["k2"])
    }

    @Test func valueLargerThanTheFormatAllowsIsRefusedAsTooLargeWithoutAByteLimit() throws {
        // Given a store with no byte limit holding k1
        let cache = try makeCache(folder)
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

    @Test(arguments: [true, false])
    func aStoreExactlyAtItsLimitEvictsNothing(limitingBytes: Bool) throws {
        // Given a limit of exactly two entries, in bytes or in entries
        let cache = try makeCache(
            folder, byteLimit: limitingBytes ? 2 * entrySize : nil, countLimit: limitingBytes ? nil : 2)

        // When two entries are written
        try cache.setValue(Data(count: 100), forKey: "k1")
        try cache.setValue(Data(count: 100), forKey: "k2")

        // Then the store is within its limit, not over it: nothing is evicted
        #expect(cache.statistics.evictions == 0)
        #expect(try liveKeys(cache, ["k1", "k2"]) == ["k1", "k2"])
    }

    @Test func entryExactlyAtTheByteLimitIsKeptAlone() throws {
        let cache = try makeCache(folder, byteLimit: entrySize)
        try cache.setValue(Data(count: 100), forKey: "k1")

        try cache.setValue(Data(count: 100), forKey: "k2")

        #expect(try liveKeys(cache, ["k1", "k2"]) == ["k2"])
    }

    @Test(arguments: [(0, nil), (nil, 0)] as [(Int?, Int?)])
    func zeroLimitKeepsNothing(byteLimit: Int?, countLimit: Int?) throws {
        let cache = try makeCache(folder, byteLimit: byteLimit, countLimit: countLimit)

        try cache.setValue(Data([1]), forKey: "k")

        #expect(try cache.value(forKey: "k") == nil)
        #expect(entryFiles(folder).isEmpty)
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

    @Test func recencySurvivesARestart() throws {
        // Given entries written and read by one instance
        let clock = ManualClock()
        do {
            let cache = try makeCache(folder, clock: clock)
            for key in ["k1", "k2", "k3"] {
                try cache.setValue(Data(count: 100), forKey: key)
                clock.advance(by: 1)
            }
            _ = try cache.value(forKey: "k1")
            clock.advance(by: 1)
        }
        // When a new instance with a limit of 3 writes a fourth entry
        let reopened = try makeCache(folder, countLimit: 3, clock: clock)
        try reopened.setValue(Data(count: 100), forKey: "k4")

        // Then the least recently used ones (k2, k3) went, by the first instance's reads
        #expect(try liveKeys(reopened, ["k1", "k2", "k3", "k4"]) == ["k1", "k4"])
    }

    @Test func trimToBytesRemovesLeastRecentlyUsed() throws {
        let clock = ManualClock()
        let cache = try makeCache(folder, clock: clock)
        for key in ["k1", "k2", "k3", "k4"] {
            try cache.setValue(Data(count: 100), forKey: key)
            clock.advance(by: 1)
        }

        let removed = try cache.trim(toBytes: 2 * entrySize)

        #expect(removed == 2)
        #expect(try liveKeys(cache, ["k1", "k2", "k3", "k4"]) == ["k3", "k4"])
    }

    @Test func trimCountsEntriesWrittenByAnotherInstance() throws {
        let clock = ManualClock()
        let limited = try makeCache(folder, countLimit: 5, clock: clock)
        _ = limited.count  // builds the index before the other instance writes
        let other = try makeCache(folder, clock: clock)
        for index in 0..<10 {
            try other.setValue(Data(count: 10), forKey: "o\(index)")
            clock.advance(by: 1)
        }

        let removed = try limited.trim()

        #expect(removed == 6)
        #expect(entryFiles(folder).count == 4)
        #expect(limited.count == 4)
    }
}

import CacheCore
import CacheTesting
import DiskCache
import Foundation
import MemoryCache
import StrataTestSupport
import Testing

@testable import MultiCache

/// Issue 17 left-overs: stale copies survive write-backs through a memory tier that is not the first, a
/// `RecordingCache` hides no stale entry, and the options are checked on every path, fresh hits included.
@Suite(.timeLimit(.minutes(10)))
struct MultiCacheLoadOptionsTierTests {
    private static let failSafe = LoadOptions(failSafe: .init(maximumStaleness: .seconds(60), throttle: .seconds(5)))

    @Test func aMemoryTierBehindTheFirstHandsItsStaleInstantOnWithAWriteBack() async throws {
        // Given a fake first tier, a MemoryCache second and a fake third, all holding a loaded entry kept
        // stale for 60 s
        let clock = ManualClock()
        let front = FaultInjectingCache<String, Data>(clock: clock)
        let memory = try MemoryCache<String, Data>(clock: clock)
        let back = FaultInjectingCache<String, Data>(clock: clock)
        let cache = try MultiCache<String, Data>(
            tiers: [.init(front, name: "front"), .init(memory, name: "memory"), .init(back, name: "back")])
        _ = try await cache.value(forKey: "k", expiry: .seconds(10), options: Self.failSafe) { bytes("v1") }
        let staleUntil = try #require(memory.entry(forKey: "k")?.staleUntil)

        // When the first tier loses it and a plain read finds it in the memory tier
        try await front.removeEntry(forKey: "k")
        #expect(try await cache.value(forKey: "k") == bytes("v1"))

        // Then the copy written back keeps the memory tier's stale instant
        #expect(try await front.entryIncludingStale(forKey: "k")?.staleUntil == staleUntil)
        clock.advance(by: 30)
        #expect(try await front.entryIncludingStale(forKey: "k")?.value == bytes("v1"))
        #expect(memory.entryIncludingStale(forKey: "k")?.value == bytes("v1"))
    }

    @Test func aMemoryTierBehindTheFirstKeepsTheStaleInstantOfAnEntryWrittenBackIntoIt() async throws {
        // Given a MemoryCache second tier that lost the entry the third still keeps stale-able
        let clock = ManualClock()
        let front = FaultInjectingCache<String, Data>(clock: clock)
        let memory = try MemoryCache<String, Data>(clock: clock)
        let back = FaultInjectingCache<String, Data>(clock: clock)
        let cache = try MultiCache<String, Data>(
            tiers: [.init(front, name: "front"), .init(memory, name: "memory"), .init(back, name: "back")])
        _ = try await cache.value(forKey: "k", expiry: .seconds(10), options: Self.failSafe) { bytes("v1") }
        try await front.removeEntry(forKey: "k")
        memory.removeEntry(forKey: "k")

        // When a plain read finds it in the third tier and writes it back
        #expect(try await cache.value(forKey: "k") == bytes("v1"))
        clock.advance(by: 30)

        // Then the memory tier serves it stale to a load whose loader fails
        #expect(memory.entryIncludingStale(forKey: "k")?.value == bytes("v1"))
        try await back.removeEntry(forKey: "k")
        try await front.removeEntry(forKey: "k")
        let value = try await cache.value(forKey: "k", expiry: .seconds(10), options: Self.failSafe) {
            throw BackendDown()
        }
        #expect(value == bytes("v1"))
    }

    @Test func aRecordingTierShowsItsStaleEntriesToALoad() async throws {
        // Given a MultiCache over a RecordingCache wrapping a MemoryCache, holding an entry kept stale
        let clock = ManualClock()
        let recording = RecordingCache<String, Data>(wrapping: try MemoryCache<String, Data>(clock: clock))
        let cache = try MultiCache<String, Data>(tiers: [.init(recording, name: "recorded")])
        _ = try await cache.value(forKey: "k", expiry: .seconds(10), options: Self.failSafe) { bytes("v1") }
        clock.advance(by: 30)

        // When the loader fails past the expiry
        let value = try await cache.value(forKey: "k", expiry: .seconds(10), options: Self.failSafe) {
            throw BackendDown()
        }

        // Then fail-safe served the stale copy through the recording tier, which recorded the read
        #expect(value == bytes("v1"))
        #expect(try await recording.entryIncludingStale(forKey: "k")?.value == bytes("v1"))
        #expect(recording.calls.contains(.entry("k")))
    }

    @Test func optionsMadeInvalidAfterCreationAreRefusedEvenOnAFreshHit() async throws {
        // Given a fresh entry in the memory tier
        let clock = ManualClock()
        let memory = try MemoryCache<String, Data>(clock: clock)
        let cache = try MultiCache<String, Data>(tiers: [.init(memory, name: "memory")])
        try await cache.setValue(bytes("v1"), forKey: "k", expiry: .seconds(60))
        var options = Self.failSafe
        #expect(try await cache.value(forKey: "k", options: options) { bytes("x") } == bytes("v1"))

        // When a property of the options is set out of range after they were made
        options.failSafe?.throttle = .seconds(-1)
        var single = LoadOptions(refreshAhead: 0.5)
        single.refreshAhead = 2

        // Then the fresh hit, on a MultiCache and on the memory tier alone, is refused with a typed error
        let error = await #expect(throws: CacheError.self) {
            _ = try await cache.value(forKey: "k", options: options) { bytes("x") }
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("throttle") == true)
        await #expect(throws: CacheError.self) {
            _ = try await memory.value(forKey: "k", options: single) { bytes("x") }
        }
        // And set back in range, it is served again
        single.refreshAhead = 0.5
        #expect(try await memory.value(forKey: "k", options: single) { bytes("x") } == bytes("v1"))
        #expect(cache.statistics.loads == 0)
    }

    @Test func aDiskTierRefusesInvalidOptionsWithTheSameErrorAsAMemoryTier() async throws {
        // Given a memory tier and a disk tier, each holding a fresh entry
        let clock = ManualClock()
        let folder = TemporaryFolder(label: "load-options-tiers")
        let disk = try DiskCache<String, Data>(
            configuration: DiskCacheConfiguration(
                name: "load-options-tiers", directory: folder.url,
                masterKeySource: .masterKey(Data((0..<32).map { UInt8($0) })), clock: clock))
        let memory = try MemoryCache<String, Data>(clock: clock)
        try await disk.setValue(bytes("v1"), forKey: "k", expiry: .seconds(60))
        try memory.setValue(bytes("v1"), forKey: "k", expiry: .seconds(60))
        let options = LoadOptions(softTimeout: .seconds(2), hardTimeout: .seconds(1))

        // When each is asked with options out of range
        let diskError = await #expect(throws: CacheError.self) {
            _ = try await disk.value(forKey: "k", options: options) { bytes("x") }
        }
        let memoryError = await #expect(throws: CacheError.self) {
            _ = try await memory.value(forKey: "k", options: options) { bytes("x") }
        }

        // Then both refuse with the one message the shared check builds
        #expect(diskError?.code == .invalidArgument)
        #expect(diskError?.message == memoryError?.message)
        withExtendedLifetime(folder) {}
    }
}

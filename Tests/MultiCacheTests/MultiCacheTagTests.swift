import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import MultiCache
import StrataTestSupport
import Testing

/// Tags through `MultiCache`: tagged writes, `removeAll(taggedWith:)` in every tier, and loads with tags
/// fenced by the version snapshot they take before the loader runs.
@Suite(.timeLimit(.minutes(10)))
struct MultiCacheTagTests {
    @Test func removingATagMissesItsEntriesInEveryTierAndKeepsTheOthers() async throws {
        let fast = try MemoryCache<String, Int>()
        let slow = try MemoryCache<String, Int>()
        let cache = try MultiCache<String, Int>([fast, slow])
        try await cache.setValue(1, forKey: "balance", tags: ["account:7"])
        try await cache.setValue(2, forKey: "summary", tags: ["account:7", "summaries"])
        try await cache.setValue(3, forKey: "rates")

        try await cache.removeAll(taggedWith: "account:7")

        #expect(try await cache.value(forKey: "balance") == nil)
        #expect(try await cache.value(forKey: "summary") == nil)
        #expect(slow.value(forKey: "summary") == nil)
        #expect(try await cache.value(forKey: "rates") == 3)
    }

    @Test func aWriteBackFromASlowerTierKeepsTheEntrysTags() async throws {
        let fast = try MemoryCache<String, Int>()
        let slow = try MemoryCache<String, Int>()
        let cache = try MultiCache<String, Int>([fast, slow])
        try slow.setValue(5, forKey: "k", tags: ["t"])

        #expect(try await cache.value(forKey: "k") == 5)
        #expect(fast.entry(forKey: "k")?.tags == ["t"])
        try await cache.removeAll(taggedWith: "t")
        #expect(fast.value(forKey: "k") == nil)
    }

    @Test func aTaggedLoadOverlappedByARemovalOfItsTagStoresNothingLive() async throws {
        // Given a load with tag "t" whose loader is running
        let fast = try MemoryCache<String, Int>()
        let slow = try MemoryCache<String, Int>()
        let cache = try MultiCache<String, Int>([fast, slow])
        let started = Gate()
        let release = Gate()
        let load = Task {
            try await cache.value(forKey: "k", tags: ["t"]) {
                started.open()
                try await release.wait()
                return 1
            }
        }
        try await started.wait()

        // When the tag is removed before the loader returns
        try await cache.removeAll(taggedWith: "t")
        release.open()

        // Then the caller still gets its value, but no tier serves it afterwards
        #expect(try await load.value == 1)
        #expect(try await cache.value(forKey: "k") == nil)
        #expect(fast.value(forKey: "k") == nil)
        #expect(slow.value(forKey: "k") == nil)
    }

    /// Two `MultiCache` instances that share only their second tier, as two processes share a disk store
    /// or a Redis namespace, each with its own memory tier and its own clock, 10 s apart in either
    /// direction. One loads a tagged entry while the other removes the tag at a random moment; once the
    /// removal has returned, the remover never reads the loaded value, whatever the clocks say.
    @Test func aRemovalInAnotherInstanceWhileATaggedLoadRunsIsNeverUndoneBySkewedClocks() async throws {
        var generator = SystemRandomNumberGenerator()
        var removedMidLoad = 0
        for run in 0..<1_000 {
            let shared = try MemoryCache<String, Int>()
            let loaderClock = ManualClock()
            let removerClock = ManualClock()
            removerClock.advance(by: .seconds(Bool.random(using: &generator) ? 10 : -10))
            let loader = try MultiCache<String, Int>([MemoryCache(clock: loaderClock), shared])
            let remover = try MultiCache<String, Int>([MemoryCache(clock: removerClock), shared])
            let started = Gate()
            let release = Gate()
            let load = Task {
                try await loader.value(forKey: "k", expiry: .seconds(30), tags: ["t"]) {
                    started.open()
                    try await release.wait()
                    return run
                }
            }
            // The removal lands before the loader starts, while it runs, or after it stored its value
            let moment = Int.random(in: 0..<3, using: &generator)
            if moment == 0 { try await remover.removeAll(taggedWith: "t") }
            try await started.wait()
            if moment == 1 {
                try await remover.removeAll(taggedWith: "t")
                removedMidLoad += 1
            }
            release.open()
            _ = try await load.value
            if moment == 2 { try await remover.removeAll(taggedWith: "t") }

            if moment >= 1 {
                #expect(try await remover.value(forKey: "k") == nil, "run \(run), removal at moment \(moment)")
                #expect(shared.value(forKey: "k") == nil, "run \(run), removal at moment \(moment)")
            }
        }
        #expect(removedMidLoad > 200)
    }
}

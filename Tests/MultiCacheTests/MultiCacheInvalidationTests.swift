import CacheCore
import CacheTesting
import Foundation
import MemoryCache
import StrataTestSupport
import Testing
@testable import MultiCache

/// Invalidations a tier publishes: removed from the tiers above it only, fenced like a removal, and
/// subscribed to for as long as the `MultiCache` lives.
@Suite(.timeLimit(.minutes(10)))
struct MultiCacheInvalidationTests {
    /// `[memory, above, publishing, below]` with `k` stored in every tier.
    private struct Stack {
        let top: MemoryCache<String, Int>
        let above: MemoryCache<String, Int>
        let publishing = PublishingTier<Int>(clock: ManualClock())
        let below: MemoryCache<String, Int>
        let applied = AppliedInvalidations()
        let cache: MultiCache<String, Int>

        init() throws {
            top = try MemoryCache()
            above = try MemoryCache()
            below = try MemoryCache()
            cache = try MultiCache<String, Int>([top, above, publishing, below])
            cache.observeAppliedInvalidations { [applied] in applied.record($0) }
        }
    }

    @Test func keysAreRemovedFromTheTiersAboveThePublisherOnly() async throws {
        let stack = try Stack()
        try await stack.cache.setValue(1, forKey: "k", expiry: .never)
        try await stack.cache.setValue(2, forKey: "other", expiry: .never)

        stack.publishing.publish(.keys(["k"]))
        await stack.applied.wait(forCount: 1)

        #expect(stack.top.value(forKey: "k") == nil)
        #expect(stack.above.value(forKey: "k") == nil)
        #expect(try await stack.publishing.storage.value(forKey: "k") == 1)
        #expect(stack.below.value(forKey: "k") == 1)
        #expect(stack.top.value(forKey: "other") == 2)
        #expect(stack.applied.events == [.keys(["k"])])
        // The next read finds it in the publisher and copies it up again
        #expect(try await stack.cache.value(forKey: "k") == 1)
        #expect(stack.top.value(forKey: "k") == 1)
    }

    @Test func everythingAboveThePublisherIsRemovedForAll() async throws {
        let stack = try Stack()
        for index in 0..<10 { try await stack.cache.setValue(index, forKey: "k\(index)", expiry: .never) }

        stack.publishing.publish(.all)
        await stack.applied.wait(forCount: 1)

        #expect(stack.top.count == 0)
        #expect(stack.above.count == 0)
        #expect(stack.below.count == 10)
        #expect(try await stack.publishing.storage.value(forKey: "k3") == 3)
        #expect(stack.applied.events == [.all])
    }

    @Test func aTagInvalidationRemovesOnlyThatTagsEntriesAboveThePublisher() async throws {
        let stack = try Stack()
        for index in 0..<10 {
            try await stack.cache.setValue(index, forKey: "k\(index)", tags: index < 4 ? ["account:7"] : [])
        }

        stack.publishing.publish(.tags(["account:7"]))
        await stack.applied.wait(forCount: 1)

        // Tagged entries are misses above the publisher; untagged ones and the tiers below are untouched
        for index in 0..<4 {
            #expect(stack.top.value(forKey: "k\(index)") == nil)
            #expect(stack.above.value(forKey: "k\(index)") == nil)
            #expect(stack.below.value(forKey: "k\(index)") == index)
        }
        for index in 4..<10 { #expect(stack.top.value(forKey: "k\(index)") == index) }
        #expect(stack.applied.events == [.tags(["account:7"])])
    }

    @Test func aReadAnsweredBeforeAnInvalidationIsNotWrittenBackAfterIt() async throws {
        // Given a read whose lookup in the publishing tier found 1 but has not answered yet
        let top = try MemoryCache<String, Int>()
        let publishing = PublishingTier<Int>(clock: ManualClock())
        let applied = AppliedInvalidations()
        let cache = try MultiCache<String, Int>([top, publishing])
        cache.observeAppliedInvalidations { applied.record($0) }
        try await publishing.setValue(1, forKey: "k", expiry: .never)
        publishing.latch.hold(.entry)
        let read = Task { try await cache.value(forKey: "k") }
        await publishing.latch.waitUntilHeld(.entry)

        // When the tier publishes an invalidation of the key, then the read answers
        publishing.publish(.keys(["k"]))
        publishing.latch.release(.entry)

        // Then the read returns what it read, but the copy is not installed above
        #expect(try await read.value == 1)
        await applied.wait(forCount: 1)
        #expect(top.value(forKey: "k") == nil)
        #expect(cache.tierStatistics[0].writeBacks == 0)
    }

    @Test func anInvalidationWaitsForAWriteBackAlreadyUnderWayThenRemovesWhatItStored() async throws {
        // Given a read that found 1 in the publishing tier and whose write-back into the top tier has begun
        let top = FaultInjectingCache<String, Int>(clock: ManualClock())
        let publishing = PublishingTier<Int>(clock: ManualClock())
        let applied = AppliedInvalidations()
        let events = CoordinatorEventLog()
        let cache = try MultiCache<String, Int>([top, publishing])
        cache.observeAppliedInvalidations { applied.record($0) }
        cache.coordinator.observe(events.observer)
        try await publishing.setValue(1, forKey: "k", expiry: .never)
        top.hold(.setEntry)
        let read = Task { try await cache.value(forKey: "k") }
        await top.waitUntilHeld(.setEntry)

        // When the publishing tier invalidates the key while that store is still in flight
        publishing.publish(.keys(["k"]))
        // (the removal either parks behind the store, as it must, or, were it not to wait, has already run;
        // unstructured tasks, since the event that does not come first comes only after the release)
        let removalDecided = Gate()
        Task {
            try await events.wait(for: .parkedMutation, count: 1)
            removalDecided.open()
        }
        Task {
            await applied.wait(forCount: 1)
            removalDecided.open()
        }
        try await removalDecided.wait()
        top.release(.setEntry)

        // Then the removal ran after the store it waited for: the top tier no longer holds the old value
        #expect(try await read.value == 1)
        await applied.wait(forCount: 1)
        #expect(events.count(of: .parkedMutation) == 1)
        #expect(try await top.entry(forKey: "k") == nil)
    }

    @Test func aLoadInFlightWhenItsKeyIsInvalidatedDoesNotStoreItsValue() async throws {
        let top = try MemoryCache<String, Int>()
        let publishing = PublishingTier<Int>(clock: ManualClock())
        let cache = try MultiCache<String, Int>([top, publishing])
        let started = Gate()
        let release = Gate()
        let load = Task {
            try await cache.value(forKey: "k", expiry: .never) {
                started.open()
                try await release.wait()
                return 1
            }
        }
        try await started.wait()
        publishing.publish(.keys(["k"]))
        release.open()
        #expect(try await load.value == 1)
        #expect(top.value(forKey: "k") == nil)
        #expect(try await publishing.storage.value(forKey: "k") == nil)
    }

    @Test func manyQueuedKeysCollapseIntoOneRemovalOfEverything() async throws {
        let stack = try Stack()
        try await stack.cache.setValue(1, forKey: "unrelated", expiry: .never)
        stack.publishing.publish(.keys((0..<5_000).map { "k\($0)" }))
        await stack.applied.wait(forCount: 1)
        #expect(stack.applied.events == [.all])
        #expect(stack.top.value(forKey: "unrelated") == nil)
    }

    @Test func aPublisherWithNothingAboveIsNotSubscribedAndAReleasedCacheUnsubscribes() async throws {
        let first = PublishingTier<Int>(clock: ManualClock())
        _ = try MultiCache<String, Int>([first])
        #expect(first.observerCount == 0)

        let publishing = PublishingTier<Int>(clock: ManualClock())
        weak var released: MultiCache<String, Int>?
        do {
            let cache = try MultiCache<String, Int>([try MemoryCache<String, Int>(), publishing])
            released = cache
            #expect(publishing.observerCount == 1)
        }
        #expect(released == nil)
        #expect(publishing.observerCount == 0)
        publishing.publish(.all)  // reaches nobody, and nothing breaks
    }
}

import CacheCore
import CacheTesting
import MemoryCache
import StrataTestSupport
import Testing

@testable import MultiCache

/// The echo of a cache's own tag removal, as a publishing tier reports it back (the Redis tier's tracking
/// hears its own `INCR`): not fenced again, while a removal by anyone else, after it or after an `.all`, is.
@Suite(.timeLimit(.minutes(10)))
struct MultiCacheOwnEchoTests {
    /// `[memory, publishing]`.
    private struct Stack {
        let top: MemoryCache<String, Int>
        let publishing = PublishingTier<Int>(clock: ManualClock())
        let applied = AppliedInvalidations()
        let cache: MultiCache<String, Int>

        init() throws {
            top = try MemoryCache()
            cache = try MultiCache<String, Int>([top, publishing])
            cache.observeAppliedInvalidations { [applied] in applied.record($0) }
        }

        /// Loads `key` tagged `t`, publishing `invalidation` while the loader runs; returns the loaded value.
        func load(
            _ key: String, value: Int, publishingMidLoad invalidation: CacheInvalidation<String>
        ) async throws -> Int {
            let started = Gate()
            let release = Gate()
            let load = Task {
                try await cache.value(forKey: key, expiry: .never, tags: ["t"]) {
                    started.open()
                    try await release.wait()
                    return value
                }
            }
            try await started.wait()
            publishing.publish(invalidation)
            release.open()
            return try await load.value
        }
    }

    @Test func theEchoOfItsOwnTagRemovalDoesNotFenceALoadButARemovalAfterItDoes() async throws {
        let stack = try Stack()
        try await stack.cache.removeAll(taggedWith: "t")

        // The echo arrives while a load that began after the removal runs: the load is stored
        #expect(try await stack.load("k", value: 1, publishingMidLoad: .tags(["t"])) == 1)
        #expect(stack.top.value(forKey: "k") == 1)
        #expect(try await stack.publishing.storage.value(forKey: "k") == 1)

        // The next report of the tag is someone else's removal: fenced and applied above
        #expect(try await stack.load("j", value: 2, publishingMidLoad: .tags(["t"])) == 2)
        await stack.applied.wait(forCount: 1)
        #expect(stack.applied.events == [.tags(["t"])])
        #expect(stack.top.value(forKey: "k") == nil)
        #expect(stack.top.value(forKey: "j") == nil)
        #expect(try await stack.publishing.storage.value(forKey: "j") == nil)
    }

    @Test func anAllFromThePublisherForgetsTheEchoesItAwaited() async throws {
        // Given an own removal whose echo has not come back
        let stack = try Stack()
        try await stack.cache.removeAll(taggedWith: "t")

        // When the publisher says it may have missed anything, then reports the tag
        stack.publishing.publish(.all)
        await stack.applied.wait(forCount: 1)
        #expect(try await stack.load("k", value: 1, publishingMidLoad: .tags(["t"])) == 1)

        // Then that report is applied like anyone's (it may be another client's removal) and fences the load
        await stack.applied.wait(forCount: 2)
        #expect(stack.applied.events == [.all, .tags(["t"])])
        #expect(stack.top.value(forKey: "k") == nil)
    }

    @Test func aTagOtherThanTheOneRemovedIsApplied() async throws {
        let stack = try Stack()
        try await stack.cache.removeAll(taggedWith: "t")
        try await stack.cache.setValue(3, forKey: "u", tags: ["u"])

        stack.publishing.publish(.tags(["t", "u"]))
        await stack.applied.wait(forCount: 1)

        #expect(stack.applied.events == [.tags(["u"])])
        #expect(stack.top.value(forKey: "u") == nil)
    }
}

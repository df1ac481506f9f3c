import CacheCore
import MemoryCache
import MultiCache
import StrataTestSupport
import Testing

/// The version snapshot a tagged load takes before its loader runs, on its own: the removal here goes to the
/// tiers directly (as another process's removal reaches a shared tier), so MultiCache's own fence on
/// `removeAll(taggedWith:)` does not see it and only the snapshot keeps the loaded value from being live.
@Suite(.timeLimit(.minutes(10)))
struct MultiCacheTagFenceTests {
    @Test func aTagRemovedInTheTiersDuringALoadLeavesTheLoadedValueDead() async throws {
        // Given a load with tag "t" whose loader is running
        let fast = try MemoryCache<String, Int>()
        let slow = try MemoryCache<String, Int>()
        let cache = try MultiCache<String, Int>([fast, slow])
        let loader = HeldLoader()
        let load = Task {
            try await cache.value(forKey: "k", tags: ["t"]) {
                try await loader.hold()
                return 1
            }
        }
        try await loader.waitUntilHeld()

        // When "t" is removed in both tiers, behind the MultiCache's back, before the loader returns
        fast.removeAll(taggedWith: "t")
        slow.removeAll(taggedWith: "t")
        loader.release()

        // Then the caller gets its value, stamped with the versions from before the removal: no tier holds it
        #expect(try await load.value == 1)
        #expect(fast.value(forKey: "k") == nil)
        #expect(slow.value(forKey: "k") == nil)
        #expect(try await cache.value(forKey: "k") == nil)
    }
}

import CacheCore

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// Load-once, one check per capability, for a cache that hosts it (`LoadHostingCache`: every Strata tier);
// another cache passes them without a call. Loaders are held open by a gate, and the checks wait for the
// coordinator's events, never for time.
extension ContractRun {
    func loadOnceRunsOnceForConcurrentCallers() async throws {
        guard let cache = cache as? any LoadHostingCache<String, Data> else { return }
        let callers = 10
        let progress = LoadProgress()
        cache.loadHost.coordinator.observe { event in if event == .joinedLoad { progress.joined() } }
        defer { cache.loadHost.coordinator.observe(nil) }
        let loaded = Self.data("loaded once")

        // Given ten callers that miss at once, with the loader held until the nine others have joined its load
        let values = try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    try await step("value(forKey: \"once\", orLoad:)") {
                        try await cache.value(forKey: "once") {
                            progress.loaderStarted()
                            await progress.waitForRelease()
                            return loaded
                        }
                    }
                }
            }
            // A cache that runs the loader a second time ends the wait too (and fails below).
            await progress.wait { $0.joins >= callers - 1 || $0.loaderRuns > 1 }
            progress.release()
            return try await group.reduce(into: [Data]()) { $0.append($1) }
        }

        // Then the loader ran once, every caller got its value, and the cache holds it
        try expect(
            progress.loaderRuns == 1, "the loader ran \(progress.loaderRuns) times for \(callers) concurrent callers")
        try expect(values == Array(repeating: loaded, count: callers), "a caller did not get the loaded value")
        _ = try await expectHit("once", loaded, "after a load-once of \(callers) callers")
    }

    func removalDuringLoadKeepsItsResultOut() async throws {
        guard let cache = cache as? any LoadHostingCache<String, Data> else { return }
        let progress = LoadProgress()
        let old = Self.data("loaded before the removal")

        // Given a load held open after its loader began
        let load = Task {
            try await step("value(forKey: \"fenced\", orLoad:)") {
                try await cache.value(forKey: "fenced") {
                    progress.loaderStarted()
                    await progress.waitForRelease()
                    return old
                }
            }
        }
        await progress.wait { $0.loaderRuns >= 1 }
        // When the key is removed before the loader returns
        try await step("removeEntry(forKey: \"fenced\") during a load") {
            try await self.cache.removeEntry(forKey: "fenced")
        }
        progress.release()

        // Then its caller still gets the loaded value, but the cache does not keep it
        try expect(try await load.value == old, "the caller of a load fenced by a removal did not get its value")
        try await expectMiss("fenced", "a value loaded while its key was removed")
        // And the next call loads again
        let fresh = Self.data("loaded after the removal")
        let again = try await step("value(forKey: \"fenced\", orLoad:) after the removal") {
            try await cache.value(forKey: "fenced") { fresh }
        }
        try expect(again == fresh, "the call after a fenced load did not load again")
    }

    func bulkLoadWithTagsThenTagRemovalMisses() async throws {
        guard let cache = cache as? any LoadHostingCache<String, Data> else { return }
        let plain = Self.data("cached, untagged")
        try await set(plain, "plain")
        let asked = LoadProgress()

        // Given a bulk load with tags of two missing keys and one cached key
        let values = try await step("values(forKeys:tags: [\"batch\"], orLoad:)") {
            try await cache.values(forKeys: ["b1", "b2", "plain"], tags: ["batch"]) { keys in
                asked.asked(keys)
                return Dictionary(uniqueKeysWithValues: keys.map { ($0, Self.data("loaded \($0)")) })
            }
        }
        try expect(asked.keysAsked == ["b1", "b2"], "the batch loader was asked for \(asked.keysAsked.sorted())")
        try expect(
            values == ["b1": Self.data("loaded b1"), "b2": Self.data("loaded b2"), "plain": plain],
            "a bulk load returned \(values.keys.sorted())")
        let stored = try await expectHit("b1", Self.data("loaded b1"), "after a bulk load with tags")
        try expect(stored.tags == ["batch"], "a bulk-loaded entry read back with tags \(stored.tags.sorted())")

        // When the tag is removed
        try await step("removeAll(taggedWith: \"batch\")") { try await cache.removeAll(taggedWith: "batch") }

        // Then every entry the bulk load stored is a miss, and the untagged one is not
        try await expectMiss("b1", "a bulk-loaded entry after removeAll(taggedWith:) of its tag")
        try await expectMiss("b2", "a bulk-loaded entry after removeAll(taggedWith:) of its tag")
        _ = try await expectHit("plain", plain, "an untagged entry after removeAll(taggedWith:)")
    }
}

/// What a contract check's loaders did, and the gate that holds them: counted under a lock, with waits that
/// end on a condition over the counts (never on time).
private final class LoadProgress: Sendable {
    struct Counts: Sendable {
        var joins = 0
        var loaderRuns = 0
        var isReleased = false
        var keysAsked: Set<String> = []
    }

    private let state = Locked(State())

    private struct State: Sendable {
        var counts = Counts()
        var waiters: [(condition: @Sendable (Counts) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    }

    var loaderRuns: Int { state.withLock { $0.counts.loaderRuns } }
    var keysAsked: Set<String> { state.withLock { $0.counts.keysAsked } }

    func joined() { update { $0.joins += 1 } }
    func loaderStarted() { update { $0.loaderRuns += 1 } }
    func release() { update { $0.isReleased = true } }
    func asked(_ keys: [String]) { update { $0.keysAsked.formUnion(keys) } }

    /// Suspends until the gate is released.
    func waitForRelease() async { await wait { $0.isReleased } }

    /// Suspends until `condition` holds for the counts.
    func wait(until condition: @escaping @Sendable (Counts) -> Bool) async {
        await withCheckedContinuation { continuation in
            let holds = state.withLock { state in
                if condition(state.counts) { return true }
                state.waiters.append((condition, continuation))
                return false
            }
            if holds { continuation.resume() }
        }
    }

    /// Changes the counts, then resumes (outside the lock) every waiter whose condition now holds.
    private func update(_ change: (inout Counts) -> Void) {
        let ready = state.withLock { state in
            change(&state.counts)
            let counts = state.counts
            let ready = state.waiters.filter { $0.condition(counts) }.map(\.continuation)
            state.waiters.removeAll { $0.condition(counts) }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }
}

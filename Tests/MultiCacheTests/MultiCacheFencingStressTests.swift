import CacheCore
import CacheTesting
import MultiCache
import StrataTestSupport
import Testing

/// Many tasks loading, writing and removing a few keys at once; afterwards no tier may hold a value that
/// a write or removal should have kept out (see `History.violation(key:value:)`).
@Suite(.timeLimit(.minutes(10)))
struct MultiCacheFencingStressTests {
    private static let keys = ["a", "b", "c"]

    @Test(arguments: [1, 2, 3] as [UInt64])
    func nothingAWriteOrRemovalFencedSurvivesInAnyTier(seed: UInt64) async throws {
        // Given two tiers that yield at every call, and a history of what each operation did
        let history = History<String>()
        let clock = ManualClock()
        let tiers = [ObservedTier(history: history, clock: clock), ObservedTier(history: history, clock: clock)]
        let cache = try MultiCache<String, Int>(tiers)

        // When 8 workers run 150 random operations each on 3 keys, in 15 rounds
        var random = SplitMix64(seed: seed)
        for _ in 0..<15 {
            let seeds = (0..<8).map { _ in random.next() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for workerSeed in seeds {
                    group.addTask {
                        var random = SplitMix64(seed: workerSeed)
                        for _ in 0..<10 {
                            try await Self.randomOperation(on: cache, history: history, using: &random)
                        }
                    }
                }
                try await group.waitForAll()
            }

            // Then, each time all are done, every value left in a tier may be there
            for (index, tier) in tiers.enumerated() {
                for key in Self.keys {
                    guard let value = try await tier.storedValue(forKey: key) else { continue }
                    let violation = history.violation(key: key, value: value)
                    #expect(violation == nil, "tier \(index), key \(key)")
                }
            }
        }
        // And loads ran (so the check had something to check)
        #expect(history.loadedValueCount > 0)
        #expect(cache.statistics.loads == history.loadedValueCount)
    }

    private static func randomOperation(
        on cache: MultiCache<String, Int>,
        history: History<String>,
        using random: inout SplitMix64
    ) async throws {
        let key = keys.randomElement(using: &random) ?? "a"
        switch Int.random(in: 0..<10, using: &random) {
        case 0..<5:
            let call = history.beginCall()
            _ = try await CurrentOperation.$id.withValue(call) {
                try await cache.value(forKey: key, expiry: .never) {
                    await Task.yield()
                    return history.loadedValue(owner: call)
                }
            }
        case 5..<7:
            let (id, value) = history.beginMutation(key: key, writes: true)
            try await CurrentOperation.$id.withValue(id) {
                try await cache.setValue(value ?? 0, forKey: key, expiry: .never)
            }
            history.endMutation(id)
        case 7..<9:
            let (id, _) = history.beginMutation(key: key, writes: false)
            try await CurrentOperation.$id.withValue(id) { try await cache.removeEntry(forKey: key) }
            history.endMutation(id)
        default:
            let (id, _) = history.beginMutation(key: nil, writes: false)
            try await CurrentOperation.$id.withValue(id) { try await cache.removeAll() }
            history.endMutation(id)
        }
    }
}

import CacheCore
import MemoryCache
import MultiCache
import StrataTestSupport
import Testing

/// MultiCache over two MemoryCache tiers under 8 concurrent tasks mixing load-once reads, plain reads,
/// writes, removals and wipes: no data race (run under `--sanitize=thread`), every waiter of a load gets a
/// result, no tier ever over its limit, no value of another key, and no value removed during (or before) a
/// load reappears after the removal returned.
@Suite struct MultiCacheConcurrencyTests {
    private struct LoadFailed: Error {}

    private static let keys = 48
    private static let fastLimit = 16
    private static let slowLimit = 40

    @Test func loadOnceUnderRemovalsNeverResurrectsAValue() async throws {
        // Given: a small fast tier in front of a larger slow one, both evicting.
        let fast = try MemoryCache<Int, Tagged>(countLimit: Self.fastLimit)
        let slow = try MemoryCache<Int, Tagged>(countLimit: Self.slowLimit)
        let cache = try MultiCache<Int, Tagged>(tiers: [.init(fast, name: "fast"), .init(slow, name: "slow")])
        let history = History<Int>()
        let operations = StressScale.scaled(4_000)

        // When: 8 tasks race through the mix.
        let tally = try await withThrowingTaskGroup(of: Tally.self) { group in
            for _ in 0..<concurrentTasks {
                group.addTask {
                    var tally = Tally()
                    for _ in 0..<operations {
                        try await Self.step(cache: cache, history: history, tally: &tally)
                        if fast.statistics.count > Self.fastLimit || slow.statistics.count > Self.slowLimit {
                            tally.limitBreaches += 1
                        }
                    }
                    return tally
                }
            }
            return try await group.reduce(into: Tally()) { $0.add($1) }
        }

        // Then: every load-once caller got a value or the loader's error, and nothing illegal was seen.
        #expect(tally.loadCalls == tally.loadResults)
        #expect(tally.loadCalls > 0 && tally.loadedValues > 0)
        #expect(tally.unexpectedErrors.isEmpty, "\(tally.unexpectedErrors.prefix(5))")
        #expect(tally.wrongKey == 0)
        #expect(tally.resurrected == 0, "\(tally.resurrections.prefix(5))")
        #expect(tally.limitBreaches == 0)
        let statistics = cache.statistics
        #expect(statistics.loadsRun <= tally.loadCalls)
        #expect(statistics.loadsRun > 0)
    }

    private static func step(cache: MultiCache<Int, Tagged>, history: History<Int>, tally: inout Tally) async throws {
        let key = Int.random(in: 0..<keys)
        let roll = Int.random(in: 0..<1_000)
        if roll < 500 {
            let fence = history.fence(for: key)
            let call = history.beginCall()
            tally.loadCalls += 1
            do {
                let value = try await cache.value(forKey: key, expiry: .never) {
                    let id = history.loadedValue(owner: call)
                    // Give other tasks a chance to join this load or to remove the key while it runs.
                    await Task.yield()
                    if id % 29 == 0 { throw LoadFailed() }
                    await Task.yield()
                    return Tagged(key: key, id: id, bytes: 1)
                }
                tally.loadResults += 1
                tally.loadedValues += 1
                tally.judge(value, key: key, fence: fence, history: history, path: "load-once")
            } catch is LoadFailed {
                tally.loadResults += 1
            } catch {
                tally.loadResults += 1
                tally.unexpectedErrors.append("\(error)")
            }
        } else if roll < 650 {
            let fence = history.fence(for: key)
            if let value = try await cache.entry(forKey: key)?.value {
                tally.judge(value, key: key, fence: fence, history: history, path: "read")
            }
        } else if roll < 800 {
            let (id, value) = history.beginMutation(key: key, writes: true)
            try await cache.setValue(Tagged(key: key, id: value ?? 0, bytes: 1), forKey: key, expiry: .never)
            history.endMutation(id)
        } else if roll < 995 {
            let (id, _) = history.beginMutation(key: key, writes: false)
            try await cache.removeEntry(forKey: key)
            history.endMutation(id)
        } else {
            let (id, _) = history.beginMutation(key: nil, writes: false)
            try await cache.removeAll()
            history.endMutation(id)
        }
    }

    private struct Tally: Sendable {
        var loadCalls = 0
        var loadResults = 0
        var loadedValues = 0
        var wrongKey = 0
        var resurrected = 0
        var resurrections: [String] = []
        var limitBreaches = 0
        var unexpectedErrors: [String] = []

        mutating func judge(_ value: Tagged, key: Int, fence: UInt64, history: History<Int>, path: String) {
            if value.key != key { wrongKey += 1 }
            if !history.mayAppear(value.id, under: fence) {
                resurrected += 1
                resurrections.append("key \(key) via \(path) under fence \(fence): \(history.describe(value.id))")
            }
        }

        mutating func add(_ other: Tally) {
            loadCalls += other.loadCalls
            loadResults += other.loadResults
            loadedValues += other.loadedValues
            wrongKey += other.wrongKey
            resurrected += other.resurrected
            resurrections += other.resurrections
            limitBreaches += other.limitBreaches
            unexpectedErrors += other.unexpectedErrors
        }
    }
}

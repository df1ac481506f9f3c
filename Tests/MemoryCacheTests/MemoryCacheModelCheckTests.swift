import CacheCore
import CacheTesting
import Foundation
import StrataTestSupport
import Testing

@testable import MemoryCache

/// Random operation sequences checked against a reference model after every step: every value read is
/// the one last written and still live, the statistics count exactly the hits and misses the reads saw
/// (buffered W-TinyLFU hits included), and the table's invariants hold, for both policies and 1, 4 and 64
/// shards, with hits buffered across every kind of removal (expiry, eviction, trims, memory pressure, tag
/// removals, `removeAll()`).
@Suite struct MemoryCacheModelCheckTests {
    /// What the model knows of a key: the value last written, its expiry and stale-until instants
    /// (seconds since the reference date), and its tags.
    struct ModelEntry {
        var value: Int
        var expiresAt: Double
        var staleUntil: Double?
        var tags: Set<String>
    }

    static let policies: [EvictionPolicy] = [.windowTinyLFU, .leastRecentlyUsed]

    /// Limited caches may evict any entry, so a read may miss a key the model holds but never return a
    /// value the model does not; an unlimited cache must return exactly what the model holds until a trim
    /// or memory pressure makes every entry uncertain.
    @Test(arguments: policies, [1, 4, 64])
    func readsAndStatisticsMatchAReferenceModel(policy: EvictionPolicy, shardCount: Int) throws {
        for (seed, limited) in [(UInt64(0xA11CE), true), (0xB0B, false), (0xC0FFEE, true)] {
            try check(policy: policy, shardCount: shardCount, seed: seed, limited: limited, steps: 6_000)
        }
    }

    @Test(arguments: policies)
    func aBulkReadCountsARepeatedMissingKeyOnce(policy: EvictionPolicy) throws {
        // Given a cache holding "a" only
        let cache = try MemoryCache<String, Int>(policy: policy)
        try cache.setValue(1, forKey: "a")
        // When an entries read names "a" twice and the missing "b" three times
        #expect(cache.entries(forKeys: ["b", "a", "b", "a", "b"]).mapValues(\.value) == ["a": 1])
        // Then each key was read once, as documented: 1 hit and 1 miss
        #expect(cache.statistics.hits == 1)
        #expect(cache.statistics.misses == 1)
        // While a values read reads a repeated key each time it is listed, as documented
        #expect(cache.values(forKeys: ["b", "a", "b"]) == ["a": 1])
        #expect(cache.statistics.hits == 2)
        #expect(cache.statistics.misses == 3)
    }

    @Test(arguments: policies)
    func aStaleIncludingReadThatFindsNothingUsableCountsAMiss(policy: EvictionPolicy) throws {
        // Given an expired entry kept for no stale reads, and a tagged entry whose tag was removed
        let clock = ManualClock()
        let cache = try MemoryCache<String, Int>(policy: policy, clock: clock)
        try cache.setValue(1, forKey: "expired", expiry: .seconds(5))
        try cache.setValue(2, forKey: "tagged", tags: ["t"])
        clock.advance(by: 10)
        cache.removeAll(taggedWith: "t")
        // When each is read including stale entries, and an absent key too
        #expect(cache.entryIncludingStale(forKey: "expired") == nil)
        #expect(cache.entryIncludingStale(forKey: "tagged") == nil)
        #expect(cache.entryIncludingStale(forKey: "absent") == nil)
        // Then each counts as the miss a plain read counts
        #expect(cache.statistics.misses == 3)
        #expect(cache.statistics.hits == 0)
    }

    func check(policy: EvictionPolicy, shardCount: Int, seed: UInt64, limited: Bool, steps: Int) throws {
        let clock = ManualClock()
        let cache = try MemoryCache<String, Int>(
            countLimit: limited ? 64 : nil, costLimit: limited ? 64 * 20 : nil, shardCount: shardCount,
            policy: policy, clock: clock)
        var random = SplitMix64(seed: seed)
        var model: [String: ModelEntry] = [:]
        // Keys the cache may have dropped by a trim or memory pressure (every key, in a limited cache).
        var uncertain: Set<String> = []
        var hits = 0
        var misses = 0
        let tags = ["red", "green", "blue"]
        func now() -> Double { clock.now.timeIntervalSinceReferenceDate }
        func live(_ key: String) -> ModelEntry? {
            guard let entry = model[key], entry.expiresAt > now() else { return nil }
            return entry
        }
        func failure(_ step: Int, _ text: String) -> String {
            "\(policy), \(shardCount) shards, seed \(seed), step \(step): \(text)"
        }
        for step in 0..<steps {
            let key = "k\(random.next(upperBound: 80 as UInt64))"
            let roll = random.next(upperBound: 1_000 as UInt64)
            let before = model[key]
            switch roll {
            case 0..<450:
                // A read: a hit must be the model's live value; a miss is allowed only for an uncertain key.
                let read = roll < 300 ? cache[key] : cache.entry(forKey: key)?.value
                if let read {
                    hits += 1
                    guard live(key)?.value == read else {
                        Issue.record(
                            Comment(
                                rawValue: failure(
                                    step, "read \(read) for \(key), model \(String(describing: live(key)))")))
                        return
                    }
                } else {
                    misses += 1
                    if !limited, !uncertain.contains(key), let expected = live(key) {
                        Issue.record(Comment(rawValue: failure(step, "missed \(key), model holds \(expected.value)")))
                        return
                    }
                }
            case 450..<500:
                let keys = (0..<3).map { _ in "k\(random.next(upperBound: 80 as UInt64))" }
                let found = cache.entries(forKeys: keys).mapValues(\.value)
                for key in Set(keys) {
                    if let read = found[key] {
                        hits += 1
                        guard live(key)?.value == read else {
                            Issue.record(Comment(rawValue: failure(step, "bulk read \(read) for \(key)")))
                            return
                        }
                    } else {
                        misses += 1
                    }
                }
            case 500..<700:
                let cost = Int(random.next(upperBound: 30 as UInt64))
                let lifetime =
                    random.next(upperBound: 4 as UInt64) == 0 ? Double(random.next(upperBound: 12 as UInt64)) : nil
                do {
                    try cache.setValue(step, forKey: key, expiry: lifetime.map { .seconds($0) }, cost: cost)
                    let expiresAt = lifetime.map { now() + $0 } ?? .infinity
                    model[key] = ModelEntry(value: step, expiresAt: expiresAt, staleUntil: nil, tags: [])
                } catch let error as CacheError where error.code == .entryTooLarge {
                    // Only a shard's share of the cost limit can be below a cost of 29; the old entry is gone.
                    model[key] = nil
                }
                if limited { uncertain.insert(key) }
            case 700..<760:
                let entryTags = Set(tags.filter { _ in random.next(upperBound: 2 as UInt64) == 0 })
                try cache.setValue(step, forKey: key, tags: entryTags)
                model[key] = ModelEntry(value: step, expiresAt: .infinity, staleUntil: nil, tags: entryTags)
                if limited { uncertain.insert(key) }
            case 760..<790:
                // An entry kept past its expiry for loads that may serve it stale.
                let expiresAt = now() + Double(random.next(upperBound: 6 as UInt64))
                let staleUntil = expiresAt + 10
                try cache.setEntry(
                    CacheEntry(
                        value: step, expiresAt: Date(timeIntervalSinceReferenceDate: expiresAt), cost: 1,
                        staleUntil: Date(timeIntervalSinceReferenceDate: staleUntil)),
                    forKey: key)
                model[key] = ModelEntry(value: step, expiresAt: expiresAt, staleUntil: staleUntil, tags: [])
                if limited { uncertain.insert(key) }
            case 790..<820:
                // A stale-including read: a fresh entry is a hit; nil for an absent key is a miss.
                let found = cache.entryIncludingStale(forKey: key)
                if let found {
                    guard let expected = model[key], expected.value == found.value else {
                        Issue.record(Comment(rawValue: failure(step, "stale read \(found.value) for \(key)")))
                        return
                    }
                    let fresh = expected.expiresAt > now()
                    if fresh {
                        hits += 1
                    } else if !(expected.staleUntil.map { $0 > now() } ?? false) {
                        Issue.record(Comment(rawValue: failure(step, "stale read past staleUntil for \(key)")))
                        return
                    }
                } else {
                    // Counted as a miss when nothing is held under the key; an expired entry still held
                    // is a miss too (see `readIncludingStale`).
                    misses += 1
                }
            case 820..<880:
                let removed = cache.removeValue(forKey: key)
                if let removed, removed != live(key)?.value {
                    Issue.record(Comment(rawValue: failure(step, "removed \(removed) for \(key)")))
                    return
                }
                model[key] = nil
                uncertain.remove(key)
            case 880..<895:
                let tag = tags[Int(random.next(upperBound: 3 as UInt64))]
                cache.removeAll(taggedWith: tag)
                model = model.filter { !$0.value.tags.contains(tag) }
            case 895..<930:
                clock.advance(by: Double(random.next(upperBound: 4 as UInt64)))
            case 930..<945:
                cache.trim(toCount: Int(random.next(upperBound: 64 as UInt64)))
                uncertain.formUnion(model.keys)
            case 945..<955:
                cache.trim(toCost: Int(random.next(upperBound: 600 as UInt64)))
                uncertain.formUnion(model.keys)
            case 955..<965:
                cache.respondToMemoryPressure(random.next(upperBound: 2 as UInt64) == 0 ? .warning : .critical)
                uncertain.formUnion(model.keys)
            case 965..<995:
                _ = cache.removeExpired()
            default:
                cache.removeAll()
                model = [:]
                uncertain = []
            }
            // Then the statistics count exactly the hits and misses seen, and the tables are consistent
            let statistics = cache.statistics
            guard statistics.hits == hits, statistics.misses == misses else {
                Issue.record(
                    Comment(
                        rawValue: failure(
                            step,
                            "statistics \(statistics.hits) hits, \(statistics.misses) misses; seen \(hits), \(misses)"
                                + " after op \(roll) on \(key), model \(String(describing: before)), now \(now())"
                        )))
                return
            }
            guard step % 7 == 0 else { continue }
            if let problem = cache.invariantViolation() {
                Issue.record(Comment(rawValue: failure(step, problem)))
                return
            }
        }
        #expect(hits > steps / 40)
    }
}

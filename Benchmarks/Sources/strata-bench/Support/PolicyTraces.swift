import Foundation

/// The request traces the eviction-policy rows replay, also written to files (`--write-traces DIR`) so
/// that `Benchmarks/policy_compare.py` can replay the very same requests in libcachesim.
struct PolicyTrace: Sendable {
    /// The trace's name in row names and file names.
    let name: String
    /// What it models, for the report.
    let description: String
    /// Key ids, one per request.
    let keys: [Int]
    /// The one cache size the trace is made for (its loop is sized for it), or `nil` for a trace replayed
    /// at every size. Such a trace's name ends in the size (`loop-1k`), and so does its file.
    var capacity: Int? = nil

    /// The row-name stem: the trace's name without its size (`loop` for `loop-1k`).
    var kind: String { capacity == nil ? name : String(name[..<(name.lastIndex(of: "-") ?? name.endIndex)]) }

    /// Zipf(0.99), Zipf(0.8), scans and a moving popular set, each `length` requests over `keyCount`
    /// keys (1M over 100k in a full run).
    static func all(keyCount: Int, length: Int) -> [PolicyTrace] {
        [
            PolicyTrace(
                name: "zipf0.99", description: "Zipf(0.99)",
                keys: ZipfTrace.make(keyCount: keyCount, length: length, exponent: 0.99, seed: 0x21FF)),
            PolicyTrace(
                name: "zipf0.8", description: "Zipf(0.8)",
                keys: ZipfTrace.make(keyCount: keyCount, length: length, exponent: 0.8, seed: 0x0808)),
            scans(keyCount: keyCount, length: length),
            moving(keyCount: keyCount, length: length),
        ]
    }

    /// The whole suite: `all` plus, for each of `capacities`, the three traces made for that size (a loop
    /// slightly larger than the cache, alone and mixed with Zipf traffic, and a trace that changes class
    /// halfway).
    static func suite(keyCount: Int, length: Int, capacities: [Int]) -> [PolicyTrace] {
        all(keyCount: keyCount, length: length)
            + capacities.flatMap { capacity in
                [
                    loop(capacity: capacity, keyCount: keyCount, length: length),
                    loopWithZipf(capacity: capacity, keyCount: keyCount, length: length),
                    shift(capacity: capacity, keyCount: keyCount, length: length),
                ]
            }
    }

    /// The keys a loop for a cache of `capacity` entries cycles through: 20% more than the cache holds, so
    /// that LRU (and any policy that admits every key) misses every request of the loop, while a policy
    /// that keeps a fixed part of the loop hits that part on every pass.
    static func loopLength(forCapacity capacity: Int) -> Int { capacity + capacity / 5 }

    /// `length` requests cycling in order through `loopLength(forCapacity:)` keys (a batch job that reads
    /// the same rows over and over, a sequential scan of a table a little larger than the cache).
    static func loop(capacity: Int, keyCount: Int, length: Int) -> PolicyTrace {
        let loop = loopLength(forCapacity: capacity)
        return PolicyTrace(
            name: "loop-\(capacity / 1000)k", description: "a loop over \(loop) keys (capacity + 20%)",
            keys: (0..<length).map { keyCount + $0 % loop }, capacity: capacity)
    }

    /// Zipf(0.99) requests interleaved with a loop over `loopLength(forCapacity:)` other keys, half of the
    /// requests each, chosen at random (a periodic batch job beside ordinary requests).
    static func loopWithZipf(capacity: Int, keyCount: Int, length: Int, seed: UInt64 = 0x100F) -> PolicyTrace {
        let background = ZipfTrace.make(keyCount: keyCount, length: length, exponent: 0.99, seed: seed)
        let loop = loopLength(forCapacity: capacity)
        var generator = SplitMix64(seed: seed ^ 0x5EED)
        var next = 0
        let keys = background.map { key -> Int in
            guard generator.next() & 1 == 0 else { return key }
            defer { next = (next + 1) % loop }
            return keyCount + next
        }
        return PolicyTrace(
            name: "loopzipf-\(capacity / 1000)k",
            description: "Zipf(0.99) interleaved at random with a loop over \(loop) other keys, half each",
            keys: keys, capacity: capacity)
    }

    /// A trace that changes class halfway: the first half is `moving` (recency pays: the window should
    /// grow), the second `loopWithZipf` over other keys (frequency pays: the window should shrink back).
    static func shift(capacity: Int, keyCount: Int, length: Int) -> PolicyTrace {
        let first = moving(keyCount: keyCount, length: length / 2).keys
        // Past every key of the first half (which reaches keyCount × 21).
        let offset = keyCount * 22
        let second = loopWithZipf(capacity: capacity, keyCount: keyCount, length: length - length / 2, seed: 0x5A1F)
            .keys.map { $0 + offset }
        return PolicyTrace(
            name: "shift-\(capacity / 1000)k",
            description: "moving for the first half, then Zipf(0.99) with a loop over \(loopLength(forCapacity: capacity)) keys",
            keys: first + second, capacity: capacity)
    }

    /// Zipf(0.99) requests with bursts of one-hit keys: each tenth of the trace is 80% Zipf requests
    /// followed by a burst of 20% keys never requested before or after (a scan, a crawler, a backup).
    static func scans(keyCount: Int, length: Int) -> PolicyTrace {
        let background = ZipfTrace.make(keyCount: keyCount, length: length, exponent: 0.99, seed: 0x5CA7)
        let segment = max(length / 10, 1)
        let burst = segment / 5
        var keys: [Int] = []
        keys.reserveCapacity(length)
        var nextOneHitKey = keyCount
        for position in 0..<length {
            if position % segment >= segment - burst {
                keys.append(nextOneHitKey)
                nextOneHitKey += 1
            } else {
                keys.append(background[position])
            }
        }
        return PolicyTrace(
            name: "scan", description: "Zipf(0.99) with a burst of one-hit keys ending each tenth (20% of it)",
            keys: keys)
    }

    /// Zipf(0.99) popularity over a key set that moves: every twentieth of the trace the ranks map to
    /// keys never seen before, so the popular keys of one phase are never requested again.
    static func moving(keyCount: Int, length: Int) -> PolicyTrace {
        let ranks = ZipfTrace.make(keyCount: keyCount, length: length, exponent: 0.99, seed: 0x3076)
        let phase = max(length / 20, 1)
        let keys = ranks.enumerated().map { position, key in key + keyCount * (position / phase) }
        return PolicyTrace(
            name: "moving", description: "Zipf(0.99) whose keys are all replaced by new ones every 5% of the trace",
            keys: keys)
    }

    /// Writes the trace as text, one key id per line (libcachesim's plain-text trace format).
    func write(to directory: URL) throws -> URL {
        let url = directory.appendingPathComponent("\(name).txt")
        var text = ""
        text.reserveCapacity(keys.count * 7)
        for key in keys {
            text += String(key)
            text += "\n"
        }
        try Data(text.utf8).write(to: url)
        return url
    }
}

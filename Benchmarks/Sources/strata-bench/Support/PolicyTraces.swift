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

    /// The whole suite: `all` plus, for each of `capacities`, the five traces made for that size (a loop
    /// slightly larger than the cache, alone and mixed with Zipf traffic, a trace that changes class
    /// halfway, and two where only recency pays: a working set that fits and slides, and keys reused within
    /// about a cache size of requests).
    static func suite(keyCount: Int, length: Int, capacities: [Int]) -> [PolicyTrace] {
        all(keyCount: keyCount, length: length)
            + capacities.flatMap { capacity in
                [
                    loop(capacity: capacity, keyCount: keyCount, length: length),
                    loopWithZipf(capacity: capacity, keyCount: keyCount, length: length),
                    shift(capacity: capacity, keyCount: keyCount, length: length),
                    sliding(capacity: capacity, length: length),
                    reuse(capacity: capacity, length: length),
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

    /// Requests uniform over a range of 90% of `capacity` consecutive keys that moves on by one key every
    /// fourth request (a working set that fits the cache and drifts: recent sessions, a feed's newest items).
    /// Each key is requested about four times while in the range, so keys the range has left keep higher
    /// counts than the keys entering it; only recency pays, and LRU keeps about 73% (at 1,000 entries).
    static func sliding(capacity: Int, length: Int, seed: UInt64 = 0x511D) -> PolicyTrace {
        let width = capacity * 9 / 10
        var generator = SplitMix64(seed: seed)
        let keys = (0..<length).map { $0 / 4 + Int(generator.next() % UInt64(width)) }
        return PolicyTrace(
            name: "sliding-\(capacity / 1000)k",
            description: "uniform over \(width) consecutive keys, the range moving on by one key every 4 requests",
            keys: keys, capacity: capacity)
    }

    /// Keys used three times each: first, then twice more, each use `capacity` / 2 to `capacity` requests
    /// after the last, a new key every third request (an object read a few times while it is current: a
    /// message, a build artefact, a page being edited). Each key's uses are within about one cache size of
    /// requests, so LRU keeps about two thirds; a key has only one or two uses counted when it comes back,
    /// fewer than the keys that have had all three.
    static func reuse(capacity: Int, length: Int, seed: UInt64 = 0x2E05) -> PolicyTrace {
        var generator = SplitMix64(seed: seed)
        // Times in sixteenths of a request, so that the offsets spread the uses between whole requests.
        var uses: [(time: Int, key: Int)] = []
        uses.reserveCapacity(length)
        for key in 0..<(length / 3) {
            var time = key * 48
            uses.append((time, key))
            for _ in 0..<2 {
                time += (capacity / 2 + Int(generator.next() % UInt64(max(capacity / 2, 1)))) * 16
                uses.append((time, key))
            }
        }
        uses.sort { ($0.time, $0.key) < ($1.time, $1.key) }
        return PolicyTrace(
            name: "reuse-\(capacity / 1000)k",
            description: "keys used three times, each use \(capacity / 2) to \(capacity) requests after the last",
            keys: uses.map(\.key), capacity: capacity)
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

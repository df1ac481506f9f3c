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

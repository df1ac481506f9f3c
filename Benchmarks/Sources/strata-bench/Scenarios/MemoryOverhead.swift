import Foundation
import MemoryCache

/// memory-overhead: resident bytes per entry for 1M Int→Int entries in a MemoryCache, against a bare
/// `[Int: Int]` holding the same entries (both grown by insertion, as a user would fill them).
///
/// Each store is built in a fresh child process (`strata-bench --footprint strata|baseline COUNT`), so
/// nothing an earlier scenario freed but the allocator kept can blur the reading: the child reads its
/// resident set size (/proc/self/statm) before and after filling the store, with freed heap memory
/// returned to the system first (malloc_trim), and prints the difference. The C-heap bytes in use
/// (glibc mallinfo2) over the same span are printed beside it.
///
/// Extras: the same entries in a cache with a count limit of exactly that many entries, under the LRU
/// and under the W-TinyLFU policy; their difference is the W-TinyLFU policy's memory per entry (the
/// sketch, each slot's key hash, the region queues and the ghost filters).
enum MemoryOverhead {
    static let scenario = Scenario("memory-overhead") { context in
        let entryCount = context.size(full: 1_000_000, quick: 200_000)
        var strataHeap: [Double] = []
        var baselineHeap: [Double] = []
        let rounds = AlternatingRounds(warmUpRounds: 0, rounds: context.quick ? 1 : 3)
        let (strata, baseline) = try rounds.run(
            strata: {
                let footprint = try FootprintProbe.measureInChild(.strata, entryCount: entryCount)
                strataHeap.append(footprint.heap)
                return footprint.resident
            },
            baseline: {
                let footprint = try FootprintProbe.measureInChild(.baseline, entryCount: entryCount)
                baselineHeap.append(footprint.heap)
                return footprint.resident
            }
        )
        let strataHeapMedian = Summary(strataHeap).median
        let baselineHeapMedian = Summary(baselineHeap).median
        var limitedLRU: [Double] = []
        var limitedTinyLFU: [Double] = []
        for _ in 0..<(context.quick ? 1 : 3) {
            limitedLRU.append(try FootprintProbe.measureInChild(.strataLimitedLRU, entryCount: entryCount).resident)
            limitedTinyLFU.append(try FootprintProbe.measureInChild(.strataTinyLFU, entryCount: entryCount).resident)
        }
        let lruMedian = Summary(limitedLRU).median
        let tinyLFUMedian = Summary(limitedTinyLFU).median
        return [
            ScenarioResult(
                name: "memory-overhead",
                unit: .bytesPerEntry,
                strata: strata,
                baseline: baseline,
                target: .ratioAtMost(3),
                extras: [
                    ("heap B/entry (mallinfo2), strata", strataHeapMedian),
                    ("heap B/entry (mallinfo2), baseline", baselineHeapMedian),
                    ("B/entry, count limit = entries, .leastRecentlyUsed", lruMedian),
                    ("B/entry, count limit = entries, .windowTinyLFU", tinyLFUMedian),
                    ("W-TinyLFU policy B/entry (difference)", tinyLFUMedian - lruMedian),
                ],
                notes: ["\(entryCount) Int→Int entries, each store filled in a fresh child process; value = RSS growth"]
            )
        ]
    }
}

/// Fills one store in this process and reports its memory, for `strata-bench --footprint`.
enum FootprintProbe {
    enum Kind: String, Sendable {
        case strata, baseline, strataLimitedLRU, strataTinyLFU
    }

    struct Footprint: Sendable {
        /// Resident-set growth per entry, in bytes.
        let resident: Double
        /// C-heap growth per entry, in bytes.
        let heap: Double
    }

    struct ProbeFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// Builds the store and prints "resident heap" (bytes per entry) on standard output.
    static func runAsChild(_ kind: Kind, entryCount: Int) throws {
        ResidentMemory.trimHeap()
        let heapBefore = ResidentMemory.heapBytesInUse() ?? 0
        let residentBefore = ResidentMemory.residentBytes() ?? 0
        let store: Any
        switch kind {
        case .strata:
            let cache = try MemoryCache<Int, Int>()
            for key in 0..<entryCount { try cache.setValue(key, forKey: key) }
            store = cache
        case .strataLimitedLRU, .strataTinyLFU:
            let cache = try MemoryCache<Int, Int>(
                countLimit: entryCount, policy: kind == .strataTinyLFU ? .windowTinyLFU : .leastRecentlyUsed)
            for key in 0..<entryCount { try cache.setValue(key, forKey: key) }
            store = cache
        case .baseline:
            var dictionary: [Int: Int] = [:]
            for key in 0..<entryCount { dictionary[key] = key }
            store = dictionary
        }
        // Buffers the store outgrew go back to the system, so RSS counts only what the store holds.
        ResidentMemory.trimHeap()
        let heapAfter = ResidentMemory.heapBytesInUse() ?? 0
        let residentAfter = ResidentMemory.residentBytes() ?? 0
        withExtendedLifetime(store) {}
        let count = Double(entryCount)
        print(Double(residentAfter - residentBefore) / count, Double(heapAfter - heapBefore) / count)
    }

    /// Runs this executable as `--footprint KIND COUNT` and parses what it prints.
    static func measureInChild(_ kind: Kind, entryCount: Int) throws -> Footprint {
        let process = Process()
        process.executableURL = URL(
            fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                ?? CommandLine.arguments[0])
        process.arguments = ["--footprint", kind.rawValue, String(entryCount)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let fields = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace).compactMap {
            Double($0)
        }
        guard process.terminationStatus == 0, fields.count == 2 else {
            throw ProbeFailure(description: "footprint child exited \(process.terminationStatus), printed \(fields)")
        }
        return Footprint(resident: fields[0], heap: fields[1])
    }
}

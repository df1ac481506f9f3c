import MemoryCache

/// memory-overhead: bytes of memory per entry for 1M Int→Int entries in a MemoryCache, against a bare
/// `[Int: Int]` holding the same entries (both grown by insertion, as a user would fill them).
///
/// Each store is built in a fresh scope and measured while alive: resident set size (from
/// /proc/self/statm) and C-heap bytes in use (mallinfo2) before and after, divided by the entry count.
/// The heap figure is the row's value (it ignores memory freed to malloc but kept by it, so it does
/// not depend on what ran before); RSS is printed beside it.
enum MemoryOverhead {
    static let scenario = Scenario("memory-overhead") { context in
        let entryCount = context.size(full: 1_000_000, quick: 200_000)
        var strataResident: [Double] = []
        var baselineResident: [Double] = []
        let rounds = AlternatingRounds(warmUpRounds: 0, rounds: context.quick ? 1 : 3)
        let (strata, baseline) = try rounds.run(
            strata: {
                let footprint = try measureFootprint(entryCount: entryCount) {
                    let cache = try MemoryCache<Int, Int>()
                    for key in 0..<entryCount { cache.setValue(key, forKey: key) }
                    return cache
                }
                strataResident.append(footprint.resident)
                return footprint.heap
            },
            baseline: {
                let footprint = measureFootprint(entryCount: entryCount) {
                    var dictionary: [Int: Int] = [:]
                    for key in 0..<entryCount { dictionary[key] = key }
                    return dictionary
                }
                baselineResident.append(footprint.resident)
                return footprint.heap
            }
        )
        let strataRSS = Summary(strataResident).median
        let baselineRSS = Summary(baselineResident).median
        return [
            ScenarioResult(
                name: "memory-overhead",
                unit: .bytesPerEntry,
                strata: strata,
                baseline: baseline,
                target: .ratioAtMost(3),
                extras: [
                    ("RSS B/entry, strata", strataRSS),
                    ("RSS B/entry, baseline", baselineRSS),
                    ("RSS ratio", strataRSS / baselineRSS),
                ],
                notes: ["\(entryCount) Int→Int entries; value = heap bytes in use (mallinfo2) per entry"]
            )
        ]
    }

    /// Builds a store with `build`, keeps it alive while reading memory, and returns bytes per entry.
    private static func measureFootprint<Store>(
        entryCount: Int,
        _ build: () throws -> Store
    ) rethrows -> (heap: Double, resident: Double) {
        ResidentMemory.trimHeap()
        let heapBefore = ResidentMemory.heapBytesInUse() ?? 0
        let residentBefore = ResidentMemory.residentBytes() ?? 0
        let store = try build()
        // Memory the build freed (outgrown buffers) is handed back first, so RSS counts only what the store holds.
        ResidentMemory.trimHeap()
        let heapAfter = ResidentMemory.heapBytesInUse() ?? 0
        let residentAfter = ResidentMemory.residentBytes() ?? 0
        withExtendedLifetime(store) {}
        let count = Double(entryCount)
        return (Double(heapAfter - heapBefore) / count, Double(residentAfter - residentBefore) / count)
    }
}

import DiskCache
import Foundation

/// The seed corpus: valid records for each decoder, so the fuzzer starts from inputs that reach deep into
/// them instead of stopping at the magic number.
enum SeedCorpus {
    static func write(to directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let expiry = Date(timeIntervalSinceReferenceDate: 900_000_000)
        var seeds: [String: Data] = [:]
        for (name, value, expiresAt, cost) in [
            ("empty", Data(), nil, nil), ("small", Data("hello".utf8), expiry, nil),
            ("costed", Data(repeating: 7, count: 300), nil, 42), ("both", Data(repeating: 1, count: 40), expiry, 9),
        ] as [(String, Data, Date?, Int?)] {
            let entry = DiskCacheFuzzing.sampleEntry(value: value, expiresAt: expiresAt, cost: cost)
            seeds["entry-\(name)"] = Data([0]) + entry
            seeds["slice-\(name)"] = Data([3 | 4]) + entry
            // The same record split into header and plaintext, for the reseal path.
            seeds["sealed-\(name)"] = Data([2]) + entry.prefix(52) + Data("fuzz-key".utf8) + value
        }
        seeds["keycheck"] = Data([1]) + DiskCacheFuzzing.sampleKeyCheck()
        seeds["statistics"] = Data([4]) + DiskCacheFuzzing.sampleStatistics()
        seeds["statistics-huge"] =
            Data([4])
            + Data(
                #"{"counters":{"hits":9223372036854775807,"misses":-1,"insertions":1e300,"evictions":0,"expirations":0,"corruptEntriesRemoved":0,"readFailures":0},"format":1}"#
                    .utf8)
        for (name, bytes) in seeds { try bytes.write(to: directory.appendingPathComponent(name)) }
        print("wrote \(seeds.count) seeds to \(directory.path)")
    }
}

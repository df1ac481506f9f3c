import DiskCache
import Foundation

/// One process of the multi-process load of `Benchmarks/sqlite_store_rows.py` (rows "WAL under sustained
/// load" and "8 processes, 90 % get / 9 % set / 1 % remove"): opens the SQLite store in a folder shared with
/// the other processes and runs a seeded mix over 10,000 keys of 4 KiB values until it has done `operations`
/// or `seconds` have passed, then keeps the store open `idleSeconds` without touching it (so the idle
/// checkpoint, not the last close, is what empties the WAL), and prints one JSON line: operations, errors
/// (each one's text, at most 5), and the get latencies' p50/p99/max in microseconds. Seed 0 instead sets
/// `operations` distinct keys once (the bytes-on-disk row).
enum DiskLoadWorker {
    struct Settings {
        var directory: URL
        var operations: Int
        var seconds: Double
        var idleSeconds: Double
        var seed: UInt64
    }

    static let keyCount = 10_000

    static func run(_ settings: Settings) throws {
        let cache = try DiskFixture.openCache(in: settings.directory, engine: .sqlite)
        var random = SplitMix64(seed: settings.seed)
        var value = Data(count: 4_096)
        for index in value.indices { value[index] = UInt8.random(in: 0...255, using: &random) }
        var getMicros: [Double] = []
        getMicros.reserveCapacity(min(settings.operations, 2_000_000))
        var errors: [String] = []
        var errorCount = 0
        var done = 0
        let start = DispatchTime.now().uptimeNanoseconds
        let end = start + UInt64(settings.seconds * 1e9)
        // Seed 0 fills the store instead: `operations` sets of distinct keys, for the bytes-on-disk row.
        while settings.seed == 0 && done < settings.operations {
            try cache.setValue(value, forKey: "fill-\(done)")
            done += 1
        }
        while done < settings.operations {
            if done % 64 == 0 && DispatchTime.now().uptimeNanoseconds >= end { break }
            let key = "key-\(Int.random(in: 0..<keyCount, using: &random))"
            let roll = Int.random(in: 0..<100, using: &random)
            do {
                if roll < 90 {
                    let before = DispatchTime.now().uptimeNanoseconds
                    _ = try cache.value(forKey: key)
                    getMicros.append(Double(DispatchTime.now().uptimeNanoseconds - before) / 1_000)
                } else if roll < 99 {
                    try cache.setValue(value, forKey: key)
                } else {
                    try cache.removeEntry(forKey: key)
                }
            } catch {
                errorCount += 1
                if errors.count < 5 { errors.append("\(error)") }
            }
            done += 1
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        // Unbuffered, unlike print: the driver samples the WAL until every process has said this.
        FileHandle.standardOutput.write(Data("LOAD-DONE\n".utf8))
        if settings.idleSeconds > 0 { Thread.sleep(forTimeInterval: settings.idleSeconds) }
        getMicros.sort()
        func percentile(_ p: Double) -> Double {
            getMicros.isEmpty ? 0 : getMicros[min(getMicros.count - 1, Int(Double(getMicros.count) * p))]
        }
        let report: [String: Any] = [
            "operations": done, "seconds": elapsed, "errors": errorCount, "errorSamples": errors,
            "gets": getMicros.count, "p50GetMicros": percentile(0.5), "p99GetMicros": percentile(0.99),
            "maxGetMicros": getMicros.last ?? 0,
        ]
        let json = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
        print(String(decoding: json, as: UTF8.self))
        withExtendedLifetime(cache) {}
    }
}

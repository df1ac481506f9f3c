import DiskCache
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// disk-memory-set-<size>, disk-memory-get-<size>: peak resident memory of one `setValue` / `value(forKey:)`
/// of a V-byte value, per byte of value, against plain file I/O of the same bytes (`Data.write(to:)`,
/// `Data(contentsOf:)`) measured the same way in the same run.
///
/// Each measurement runs in a fresh child process (`strata-bench --value-memory KIND BYTES DIR`), since the
/// peak (`getrusage` `ru_maxrss`) only ever grows: the child notes its resident size, builds the value (or
/// not, for a read), does the one operation, and prints its peak minus the starting size. For a write the
/// value itself counts (V); for a read the returned value counts (V). So 1.0 is the least any
/// implementation can show, and Strata's goal (issue 12) is at most 1.2 V + 32 MiB.
enum DiskValueMemory {
    static let scenario = Scenario("disk-memory-set", "disk-memory-get") { context in
        let sizes = context.quick ? [64 << 20] : [64 << 20, 256 << 20]
        var results: [ScenarioResult] = []
        for size in sizes {
            let directory = try context.makeDirectory("value-memory-\(size)")
            let label = "\(size >> 20)M"
            let rounds = AlternatingRounds(warmUpRounds: 0, rounds: context.quick ? 1 : 3)
            let (setStrata, setPlain) = try rounds.run(
                strata: { try Probe.measureInChild(.strataSet, bytes: size, directory: directory) },
                baseline: { try Probe.measureInChild(.plainWrite, bytes: size, directory: directory) })
            let (getStrata, getPlain) = try rounds.run(
                strata: { try Probe.measureInChild(.strataGet, bytes: size, directory: directory) },
                baseline: { try Probe.measureInChild(.plainRead, bytes: size, directory: directory) })
            let note = "\(label) value; peak RSS growth of a fresh child process ÷ value bytes"
            results.append(
                ScenarioResult(
                    name: "disk-memory-set-\(label)", unit: .peakBytesPerValueByte, strata: setStrata,
                    baseline: setPlain, target: .ratioAtMost(1.2), notes: [note + "; baseline Data.write(to:)"]))
            results.append(
                ScenarioResult(
                    name: "disk-memory-get-\(label)", unit: .peakBytesPerValueByte, strata: getStrata,
                    baseline: getPlain, target: .ratioAtMost(1.2), notes: [note + "; baseline Data(contentsOf:)"]))
        }
        return results
    }

    /// One operation in a child process, for `strata-bench --value-memory`.
    enum Probe {
        enum Kind: String, Sendable {
            case strataSet = "strata-set", plainWrite = "plain-write", strataGet = "strata-get"
            case plainRead = "plain-read"
        }

        struct ProbeFailure: Error, CustomStringConvertible {
            let description: String
        }

        /// Does the operation and prints the peak resident growth in bytes per value byte.
        static func runAsChild(_ kind: Kind, bytes: Int, directory: URL) throws {
            let plainFile = directory.appendingPathComponent("plain.bin")
            ResidentMemory.trimHeap()
            let start = ResidentMemory.residentBytes() ?? 0
            var produced = 0
            switch kind {
            case .strataSet:
                let cache = try DiskFixture.openCache(in: directory.appendingPathComponent("store"), engine: .files)
                try cache.setValue(makeValue(bytes), forKey: "value")
            case .plainWrite:
                try makeValue(bytes).write(to: plainFile)
            case .strataGet:
                let cache = try DiskFixture.openCache(in: directory.appendingPathComponent("store"), engine: .files)
                produced = try cache.value(forKey: "value")?.count ?? 0
            case .plainRead:
                produced = try Data(contentsOf: plainFile).count
            }
            guard kind == .strataSet || kind == .plainWrite || produced == bytes else {
                throw ProbeFailure(description: "read \(produced) bytes, expected \(bytes)")
            }
            var usage = rusage()
            #if canImport(Glibc)
            getrusage(RUSAGE_SELF.rawValue, &usage)
            #else
            getrusage(RUSAGE_SELF, &usage)
            #endif
            // ru_maxrss is in KiB on Linux.
            let peak = Int(usage.ru_maxrss) * 1024
            print(Double(peak - start) / Double(bytes))
        }

        /// `bytes` of incompressible value, built in place (no second copy).
        static func makeValue(_ bytes: Int) -> Data {
            var data = Data(count: bytes)
            var generator = SplitMix64(seed: 12)
            data.withUnsafeMutableBytes { buffer in
                let words = buffer.bindMemory(to: UInt64.self)
                for index in words.indices { words[index] = generator.next() }
            }
            return data
        }

        /// Runs this executable as `--value-memory KIND BYTES DIR` and parses what it prints.
        static func measureInChild(_ kind: Kind, bytes: Int, directory: URL) throws -> Double {
            let process = Process()
            process.executableURL = URL(
                fileURLWithPath: (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
                    ?? CommandLine.arguments[0])
            process.arguments = ["--value-memory", kind.rawValue, String(bytes), directory.path]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            guard process.terminationStatus == 0,
                let value = Double(
                    String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            else {
                throw ProbeFailure(
                    description: "value-memory child \(kind.rawValue) exited \(process.terminationStatus)")
            }
            return value
        }
    }
}

import Foundation

/// The command line: `strata-bench [--quick] [--filter NAME[,NAME...]] [--json FILE] [--list]`.
struct Options: Sendable {
    var quick = false
    /// Substrings; a scenario runs when one of its row names contains any of them. Empty runs all.
    var filters: [String] = []
    var jsonPath: String?
    var listOnly = false
    /// `--footprint KIND COUNT` (internal): fill one store and print its memory, for memory-overhead.
    var footprint: (kind: FootprintProbe.Kind, entryCount: Int)?
    /// `--value-memory KIND BYTES DIR` (internal): one large set or get, for disk-memory-set/get.
    var valueMemory: (kind: DiskValueMemory.Probe.Kind, bytes: Int, directory: URL)?
    /// `--load-worker DIR OPS SECONDS IDLE SEED` (internal): one process of Benchmarks/sqlite_store_rows.py's
    /// mixed multi-process load on a SQLite store.
    var loadWorker: DiskLoadWorker.Settings?
    /// Where `--write-traces` writes the eviction-policy traces, for `policy_compare.py`.
    var traceDirectory: String?
    /// `--hash-seeds N`: key-hash seeds per W-TinyLFU hit ratio in the policy-hit-ratio rows (at least 1).
    var hashSeeds = 1

    static let usage = """
        usage: strata-bench [--quick] [--filter NAME[,NAME...]] [--json FILE] [--list]
          --quick        smaller data and fewer rounds (CI; under a minute in a release build)
          --filter NAME  run only scenarios whose name contains NAME (repeatable, or comma-separated)
          --json FILE    also write the results as a JSON array, one object per scenario row
          --list         print the scenario names and exit
          --write-traces DIR  write the policy-hit-ratio traces (one key per line) into DIR and exit
          --hash-seeds N report each policy-hit-ratio W-TinyLFU figure as the median over N key-hash seeds
                         (reproducible under SWIFT_DETERMINISTIC_HASHING=1)
        """

    struct UsageError: Error, CustomStringConvertible {
        let description: String
    }

    init(arguments: [String]) throws {
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            switch argument {
            case "--quick":
                quick = true
            case "--list":
                listOnly = true
            case "--filter":
                guard let value = remaining.popFirst() else { throw UsageError(description: "--filter needs a name") }
                filters += value.split(separator: ",").map(String.init)
            case "--json":
                guard let value = remaining.popFirst() else { throw UsageError(description: "--json needs a file") }
                jsonPath = value
            case "--footprint":
                guard let kind = remaining.popFirst().flatMap(FootprintProbe.Kind.init(rawValue:)),
                    let count = remaining.popFirst().flatMap({ Int($0) })
                else { throw UsageError(description: "--footprint needs strata|baseline|strataLimitedLRU|strataTinyLFU and a count") }
                footprint = (kind, count)
            case "--value-memory":
                guard let kind = remaining.popFirst().flatMap(DiskValueMemory.Probe.Kind.init(rawValue:)),
                    let bytes = remaining.popFirst().flatMap({ Int($0) }), let directory = remaining.popFirst()
                else { throw UsageError(description: "--value-memory needs a kind, a byte count and a folder") }
                valueMemory = (kind, bytes, URL(fileURLWithPath: directory))
            case "--load-worker":
                guard let directory = remaining.popFirst(), let operations = remaining.popFirst().flatMap({ Int($0) }),
                    let seconds = remaining.popFirst().flatMap({ Double($0) }),
                    let idle = remaining.popFirst().flatMap({ Double($0) }),
                    let seed = remaining.popFirst().flatMap({ UInt64($0) })
                else {
                    throw UsageError(description: "--load-worker needs a folder, operations, seconds, idle seconds, a seed")
                }
                loadWorker = .init(
                    directory: URL(fileURLWithPath: directory), operations: operations, seconds: seconds,
                    idleSeconds: idle, seed: seed)
            case "--write-traces":
                guard let value = remaining.popFirst() else {
                    throw UsageError(description: "--write-traces needs a directory")
                }
                traceDirectory = value
            case "--hash-seeds":
                guard let count = remaining.popFirst().flatMap({ Int($0) }), count >= 1 else {
                    throw UsageError(description: "--hash-seeds needs a positive count")
                }
                hashSeeds = count
            case "-h", "--help":
                throw UsageError(description: "")
            default:
                throw UsageError(description: "unknown argument '\(argument)'")
            }
        }
    }

    func selects(_ name: String) -> Bool {
        filters.isEmpty || filters.contains { name.contains($0) }
    }
}

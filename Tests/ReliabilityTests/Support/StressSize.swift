import Foundation

/// How hard the concurrency tests push: 8 tasks, each doing `operationsPerTask` mixed operations.
///
/// CI runs a reduced size by default; `Tests/Reliability/run-full.sh` sets `STRATA_RELIABILITY_OPS=50000`
/// for the full figures of Docs/Reliability.md.
enum StressSize {
    static let tasks = 8

    static var operationsPerTask: Int {
        ProcessInfo.processInfo.environment["STRATA_RELIABILITY_OPS"].flatMap(Int.init) ?? 4_000
    }
}

/// A value that names the key it was written for and where it came from, so a read can prove it got a
/// value of the right key and check whether that value may still be visible.
struct Tagged: Sendable, Hashable {
    var key: Int
    var id: Int
    var bytes: Int
}

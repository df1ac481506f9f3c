// The SQLite layer's overhead (Docs/DiskEngine-SQLite.md, "Measured"): raw sets and gets of sealed-size blobs
// through the SQLite C API against the same through DiskCache's internal SQLite layer
// (Sources/DiskCache/Internal/SQLite), compiled into this program by ../sqlite_layer_bench.sh (the layer is
// internal, so it cannot be reached through the Benchmarks package's public products).
//
// Workload, the same for both sides: 10,000 keys; each key's row holds a 32-byte name (a keyed hash stands
// behind it in the engine), an expiry and the sealed value: 128 B (a 100 B value + 12 B nonce + 16 B tag) or
// 4,124 B (4 KiB + 28 B). "set" writes every key once, each in its own BEGIN IMMEDIATE transaction (after
// the warm-up round each replaces a row); "get" reads every key once in a seeded random order and copies the
// value out. One untimed warm-up round, then alternating timed rounds; the median round is reported.
// WAL, synchronous=NORMAL, journal_size_limit 4 MiB, mmap_size as the row says; one database per side.
import Foundation

#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

let arguments = CommandLine.arguments
let quick = arguments.contains("--quick")
let keyCount = quick ? 1_000 : 10_000
let rounds = quick ? 3 : 7
nonisolated(unsafe) var blackHole = 0
let folder =
    arguments.firstIndex(of: "--dir").map { arguments[$0 + 1] } ?? NSTemporaryDirectory() + "/strata-sqlite-bench"

struct Workload {
    var names: [[UInt8]]
    var order: [Int]
    var values: [[UInt8]]

    init(valueSize: Int) {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            // SplitMix64: deterministic inputs, the same for both sides.
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        names = (0..<keyCount).map { _ in (0..<32).map { _ in UInt8(truncatingIfNeeded: next()) } }
        values = (0..<keyCount).map { _ in (0..<valueSize).map { _ in UInt8(truncatingIfNeeded: next()) } }
        order = Array(0..<keyCount)
        for index in stride(from: order.count - 1, to: 0, by: -1) {
            order.swapAt(index, Int(next() % UInt64(index + 1)))
        }
    }
}

let schema = "CREATE TABLE IF NOT EXISTS entry(id INTEGER PRIMARY KEY, name BLOB NOT NULL UNIQUE, expires INTEGER, value BLOB)"
let setSQL = "INSERT OR REPLACE INTO entry(name, expires, value) VALUES (?1, ?2, ?3)"
let getSQL = "SELECT expires, value FROM entry WHERE name = ?1"

/// One side of the comparison.
protocol Side {
    func set(_ workload: Workload) throws
    func get(_ workload: Workload, into sink: inout [UInt8]) throws -> Int
}

// MARK: - Raw: the C API, statements prepared once, the value bound SQLITE_STATIC

final class RawSide: Side {
    let db: OpaquePointer
    let begin: OpaquePointer
    let commit: OpaquePointer
    let insert: OpaquePointer
    let select: OpaquePointer

    init(path: String, mmapSize: Int64) {
        var handle: OpaquePointer?
        precondition(sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK)
        db = handle!
        _ = sqlite3_busy_timeout(db, 5_000)
        for pragma in [
            "PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA journal_size_limit=\(4 << 20)",
            "PRAGMA mmap_size=\(mmapSize)", schema,
        ] {
            precondition(sqlite3_exec(db, pragma, nil, nil, nil) == SQLITE_OK, String(cString: sqlite3_errmsg(db)))
        }
        let db = db
        func prepare(_ sql: String) -> OpaquePointer {
            var statement: OpaquePointer?
            precondition(sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil) == SQLITE_OK)
            return statement!
        }
        begin = prepare("BEGIN IMMEDIATE")
        commit = prepare("COMMIT")
        insert = prepare(setSQL)
        select = prepare(getSQL)
    }

    func run(_ statement: OpaquePointer) {
        precondition(sqlite3_step(statement) == SQLITE_DONE, String(cString: sqlite3_errmsg(db)))
        sqlite3_reset(statement)
    }

    func set(_ workload: Workload) throws {
        for index in 0..<keyCount {
            run(begin)
            workload.names[index].withUnsafeBytes { name in
                workload.values[index].withUnsafeBytes { value in
                    sqlite3_bind_blob64(insert, 1, name.baseAddress, UInt64(name.count), nil)
                    sqlite3_bind_int64(insert, 2, 1_900_000_000)
                    sqlite3_bind_blob64(insert, 3, value.baseAddress, UInt64(value.count), nil)
                    run(insert)
                    sqlite3_clear_bindings(insert)
                }
            }
            run(commit)
        }
    }

    func get(_ workload: Workload, into sink: inout [UInt8]) throws -> Int {
        var total = 0
        for index in workload.order {
            workload.names[index].withUnsafeBytes { name in
                sqlite3_bind_blob64(select, 1, name.baseAddress, UInt64(name.count), nil)
                precondition(sqlite3_step(select) == SQLITE_ROW)
                total &+= Int(sqlite3_column_int64(select, 0))
                let pointer = sqlite3_column_blob(select, 1)
                let count = Int(sqlite3_column_bytes(select, 1))
                sink.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: count)) }
                total &+= count
                sqlite3_reset(select)
                sqlite3_clear_bindings(select)
            }
        }
        return total
    }
}

// MARK: - Through the layer

final class LayerSide: Side {
    let connection: SQLiteConnection

    init(path: String, mmapSize: Int64) throws {
        var options = SQLiteConnection.Options()
        options.mmapSize = mmapSize
        connection = try SQLiteConnection(path: path, options: options)
        try connection.execute(schema)
    }

    func set(_ workload: Workload) throws {
        for index in 0..<keyCount {
            // Both blobs borrowed (SQLITE_STATIC), as the raw side binds them.
            try workload.names[index].withUnsafeBytes { name in
                try workload.values[index].withUnsafeBytes { value in
                    try connection.writeTransaction {
                        try connection.withStatement(setSQL) { statement in
                            try statement.bind(borrowing: name, at: 1)
                            try statement.bind(Int64(1_900_000_000), at: 2)
                            try statement.bind(borrowing: value, at: 3)
                            _ = try statement.step()
                        }
                    }
                }
            }
        }
    }

    func get(_ workload: Workload, into sink: inout [UInt8]) throws -> Int {
        var total = 0
        for index in workload.order {
            total &+= try workload.names[index].withUnsafeBytes { name in
                try connection.withStatement(getSQL) { statement in
                    try statement.bind(borrowing: name, at: 1)
                    let found = try statement.step()
                    precondition(found)
                    let expires = Int(statement.int64(at: 0))
                    let count = try statement.withBlob(at: 1) { value in
                        sink.withUnsafeMutableBytes { $0.copyMemory(from: value) }
                        return value.count
                    }
                    return expires &+ count
                }
            }
        }
        return total
    }
}

// MARK: - Rounds

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

// `--count SIDE OPERATION SIZE OPERATIONS`: for instruction counting under callgrind (../sqlite_layer_bench.sh
// --instructions): builds the rows untimed, then runs OPERATIONS sets or gets of one side and exits. The
// script runs it with 0 and with N operations and divides the difference by N.
if let flag = arguments.firstIndex(of: "--count") {
    let side = arguments[flag + 1]
    let operation = arguments[flag + 2]
    let valueSize = Int(arguments[flag + 3])!
    let operations = Int(arguments[flag + 4])!
    try? FileManager.default.removeItem(atPath: folder)
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let workload = Workload(valueSize: valueSize)
    let path = "\(folder)/\(side).sqlite"
    let chosen: any Side = side == "raw" ? RawSide(path: path, mmapSize: 0) : try LayerSide(path: path, mmapSize: 0)
    try chosen.set(workload)
    var sink = [UInt8](repeating: 0, count: valueSize)
    var done = 0
    while done < operations {
        if operation == "set" { try chosen.set(workload) } else { blackHole &+= try chosen.get(workload, into: &sink) }
        done += keyCount
    }
    try? FileManager.default.removeItem(atPath: folder)
    exit(blackHole == 42 ? 1 : 0)
}

try? FileManager.default.removeItem(atPath: folder)
try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
print("SQLite \(String(cString: sqlite3_libversion())), \(keyCount) keys, median of \(rounds) rounds, folder \(folder)")
print("| row | raw C API ops/s | through the layer ops/s | layer / raw |")
print("|---|---|---|---|")
for mmapSize: Int64 in [64 << 20, 0] {
    for (label, valueSize) in [("100 B", 128), ("4 KiB", 4_124)] {
        let workload = Workload(valueSize: valueSize)
        let tag = "\(valueSize)-\(mmapSize)"
        let raw = RawSide(path: "\(folder)/raw-\(tag).sqlite", mmapSize: mmapSize)
        let layer = try LayerSide(path: "\(folder)/layer-\(tag).sqlite", mmapSize: mmapSize)
        var sink = [UInt8](repeating: 0, count: valueSize)
        // Warm-up: creates every row on both sides.
        try raw.set(workload)
        try layer.set(workload)
        var times: [String: [Double]] = [:]
        for _ in 0..<rounds {
            for (name, side) in [("raw", raw as any Side), ("layer", layer as any Side)] {
                times["set-" + name, default: []].append(try seconds { try side.set(workload) })
                times["get-" + name, default: []].append(try seconds { blackHole &+= try side.get(workload, into: &sink) })
            }
        }
        for operation in ["set", "get"] {
            let rawRate = Double(keyCount) / median(times[operation + "-raw"]!)
            let layerRate = Double(keyCount) / median(times[operation + "-layer"]!)
            let mmap = mmapSize == 0 ? "no mmap" : "mmap 64 MiB"
            print(
                "| \(operation) \(label) (\(valueSize) B sealed), \(mmap) | \(Int(rawRate)) | \(Int(layerRate)) | "
                    + String(format: "%.2f", layerRate / rawRate) + " |")
        }
    }
}
if blackHole == 42 { print("") }
try? FileManager.default.removeItem(atPath: folder)

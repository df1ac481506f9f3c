import Foundation

/// redis-py's sequential GET, measured by `Benchmarks/redis_py_peer.py` against the bench server: one
/// process per round so that its rounds alternate with Strata's in the same run.
enum RedisPyPeer {
    struct Round: Decodable {
        var opsPerSecond: [Double]
        var p50Microseconds: Double
        var p99Microseconds: Double
    }

    /// The script beside this package's manifest (`Benchmarks/redis_py_peer.py`).
    static var script: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("redis_py_peer.py")
    }

    /// Runs one round of `count` GETs; nil when python3 or the script is missing or redis-py cannot be
    /// installed (the row is then skipped with a note, as the Redis rows are without Redis).
    static func round(port: Int, count: Int) -> Round? {
        guard FileManager.default.fileExists(atPath: script.path) else { return nil }
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path, "--port", String(port), "--count", String(count), "--rounds", "1"]
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return try? JSONDecoder().decode(Round.self, from: data)
    }
}

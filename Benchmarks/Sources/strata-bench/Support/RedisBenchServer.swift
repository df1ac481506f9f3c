import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A `redis-server` child on a free loopback port for the Redis rows, and `redis-benchmark` runs against
/// it: the baseline of every Redis row is measured right before Strata's, in the same run. With
/// certificates it listens with TLS on a second port as well, so plaintext and TLS rows share one server.
final class RedisBenchServer: @unchecked Sendable {
    // @unchecked Sendable is sound: every stored property is set in `init` and never changes.
    let port: Int
    /// The TLS port, or 0 without certificates.
    let tlsPort: Int
    /// What the TLS listener presents and its clients trust, or `nil`.
    let certificates: BenchCertificates?
    private let process: Process

    /// Why the Redis rows cannot run.
    struct Unavailable: Error, CustomStringConvertible {
        var description: String
    }

    static func executable(_ name: String) -> String? {
        ["/usr/bin/\(name)", "/usr/local/bin/\(name)"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Starts the server.
    ///
    /// - Parameter certificates: A TLS listener on ``tlsPort`` too (`--tls-port`, no client certificates
    ///   required), or `nil` for plain TCP only.
    init(certificates: BenchCertificates? = nil) throws {
        guard let server = Self.executable("redis-server") else {
            throw Unavailable(description: "redis-server is not installed")
        }
        port = try Self.freePort()
        tlsPort = certificates == nil ? 0 : try Self.freePort()
        self.certificates = certificates
        process = Process()
        process.executableURL = URL(fileURLWithPath: server)
        let tlsArguments =
            certificates.map {
                [
                    "--tls-port", String(tlsPort), "--tls-cert-file", $0.certificate, "--tls-key-file", $0.key,
                    "--tls-ca-cert-file", $0.certificate, "--tls-auth-clients", "no",
                ]
            } ?? []
        process.arguments =
            ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--logfile", ""]
            + tlsArguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        for listener in [port, tlsPort] where listener != 0 {
            for _ in 0..<2000 where !Self.accepts(listener) { usleep(5_000) }
            guard Self.accepts(listener) else {
                throw Unavailable(description: "redis-server did not start on \(listener)")
            }
        }
    }

    /// Sends `signal` to the server (`SIGSTOP` makes it a peer that is silent without closing).
    func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    deinit {
        kill(process.processIdentifier, SIGCONT)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// One `redis-benchmark` result row.
    struct BenchmarkRow {
        var requestsPerSecond: Double
        var p50Milliseconds: Double
        var p99Milliseconds: Double
    }

    /// Runs `redis-benchmark --csv` with `arguments` and returns the row for `test` (`GET`, `SET`, `INCR`).
    ///
    /// - Parameter tls: Against the TLS port, `--tls --cacert` with the server's own certificate.
    func benchmark(_ arguments: [String], test: String, tls: Bool = false) throws -> BenchmarkRow {
        let target =
            if tls, let certificates {
                ["-p", String(tlsPort), "--tls", "--cacert", certificates.certificate]
            } else {
                ["-p", String(port)]
            }
        return try Self.runBenchmark(["-h", "127.0.0.1"] + target + arguments, test: test)
    }

    /// Runs `redis-benchmark --csv` with `arguments` (which name the server) and returns the row for `test`;
    /// shared with ``RedisBenchCluster``.
    static func runBenchmark(_ arguments: [String], test: String) throws -> BenchmarkRow {
        guard let tool = executable("redis-benchmark") else {
            throw Unavailable(description: "redis-benchmark is not installed")
        }
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["--csv"] + arguments
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            guard fields.count >= 7, fields[0] == test, let rps = Double(fields[1]), let p50 = Double(fields[4]),
                let p99 = Double(fields[6])
            else { continue }
            return BenchmarkRow(requestsPerSecond: rps, p50Milliseconds: p50, p99Milliseconds: p99)
        }
        throw Unavailable(description: "redis-benchmark printed no \(test) row")
    }

    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
            }
        }
        guard bound else { throw Unavailable(description: "no free loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}

/// Per-operation latencies in nanoseconds, and the percentiles of them.
struct Latencies {
    var samples: [Double] = []

    func percentile(_ fraction: Double) -> Double {
        let sorted = samples.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
    }
}

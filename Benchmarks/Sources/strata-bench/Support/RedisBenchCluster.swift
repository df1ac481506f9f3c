import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A loopback Redis Cluster for the cluster rows: six `redis-server` children (three primaries, a replica
/// each), formed by `redis-cli --cluster create … --cluster-replicas 1 --cluster-yes`, and
/// `redis-benchmark --cluster` runs against it, so the rows' baseline is measured in the same run.
///
/// Every node gets a free loopback port and a free cluster-bus port (`--cluster-port`: `port + 10000` may
/// be taken), never 7101–7106 or their buses, which a developer's own cluster may hold. The nodes' files
/// live in a temporary folder of this cluster. Every node is stopped by its pid when the cluster is
/// released, or when forming it fails.
final class RedisBenchCluster: @unchecked Sendable {
    // @unchecked Sendable is sound: every stored property is set in `init` and never changes.
    /// Every node's client port, in creation order: `redis-cli` makes the first three the primaries.
    let ports: [Int]
    private let processes: [Process]
    private let folder: URL

    /// Starts six nodes, forms the cluster, and waits until every node reports `cluster_state:ok` with six
    /// known nodes, three shards and three replicas.
    ///
    /// - Throws: ``RedisBenchServer/Unavailable`` when a tool is missing, a node does not start, `redis-cli`
    ///   fails, or the nodes do not agree within 60 s.
    init() throws {
        guard let server = RedisBenchServer.executable("redis-server"),
            RedisBenchServer.executable("redis-cli") != nil
        else {
            throw RedisBenchServer.Unavailable(description: "redis-server or redis-cli is not installed")
        }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-bench-cluster-\(ProcessInfo.processInfo.processIdentifier)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var ports: [Int] = []
        var processes: [Process] = []
        do {
            for _ in 0..<6 {
                let port = try Self.allowedFreePort()
                let bus = try Self.allowedFreePort()
                let process = Process()
                process.executableURL = URL(fileURLWithPath: server)
                process.arguments = [
                    "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                    "--logfile", "", "--cluster-enabled", "yes", "--cluster-config-file", "nodes-\(port).conf",
                    "--cluster-node-timeout", "2000", "--cluster-port", String(bus), "--dir", folder.path,
                ]
                process.standardOutput = FileHandle.nullDevice
                process.standardError = FileHandle.nullDevice
                try process.run()
                processes.append(process)
                ports.append(port)
            }
            for port in ports {
                for _ in 0..<2000 where !RedisBenchServer.accepts(port) { usleep(5_000) }
                guard RedisBenchServer.accepts(port) else {
                    throw RedisBenchServer.Unavailable(description: "a cluster node did not start on \(port)")
                }
            }
            _ = try Self.cli(
                ["--cluster", "create"] + ports.map { "127.0.0.1:\($0)" } + [
                    "--cluster-replicas", "1", "--cluster-yes",
                ])
            try Self.waitUntilFormed(ports)
        } catch {
            Self.stop(processes)
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        self.ports = ports
        self.processes = processes
    }

    deinit {
        Self.stop(processes)
        try? FileManager.default.removeItem(at: folder)
    }

    /// Runs `redis-benchmark --cluster --csv` against the first node with `arguments`; returns the row for `test`.
    func benchmark(_ arguments: [String], test: String) throws -> RedisBenchServer.BenchmarkRow {
        try RedisBenchServer.runBenchmark(
            ["-h", "127.0.0.1", "-p", String(ports[0]), "--cluster"] + arguments, test: test)
    }

    /// How many of `ports` are primaries holding slots (the cluster's shape, printed with the rows).
    func primaryCount() throws -> Int {
        let nodes = try Self.cli(["-p", String(ports[0]), "cluster", "nodes"])
        return nodes.split(whereSeparator: \.isNewline).filter { line in
            let fields = line.split(separator: " ")
            return fields.count > 8 && fields[2].split(separator: ",").contains("master")
        }.count
    }

    private static func stop(_ processes: [Process]) {
        for process in processes where process.isRunning {
            kill(process.processIdentifier, SIGCONT)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    /// A free loopback port outside 7101–7106 and 17101–17106.
    private static func allowedFreePort() throws -> Int {
        for _ in 0..<100 {
            let port = try RedisBenchServer.freePort()
            if !(7101...7106).contains(port) && !(17101...17106).contains(port) { return port }
        }
        throw RedisBenchServer.Unavailable(description: "no free loopback port outside the reserved ones")
    }

    /// Runs `redis-cli` with `arguments` and returns what it printed; throws when it exits with an error.
    @discardableResult
    private static func cli(_ arguments: [String]) throws -> String {
        guard let tool = RedisBenchServer.executable("redis-cli") else {
            throw RedisBenchServer.Unavailable(description: "redis-cli is not installed")
        }
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["-h", "127.0.0.1"] + arguments
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw RedisBenchServer.Unavailable(
                description: "redis-cli \(arguments.prefix(2)) failed: \(text.suffix(300))")
        }
        return text
    }

    /// Polls every node until each reports the whole cluster and `CLUSTER NODES` lists three replicas (right
    /// after `create` the replicas show as primaries without slots for a moment); the gossip decides when.
    private static func waitUntilFormed(_ ports: [Int]) throws {
        let deadline = Date().addingTimeInterval(60)
        var pending = "no node answered"
        while Date() < deadline {
            pending = ""
            for port in ports {
                let info = (try? cli(["-p", String(port), "cluster", "info"])) ?? ""
                let fields = Set(info.split(whereSeparator: \.isNewline).map(String.init))
                let nodes = (try? cli(["-p", String(port), "cluster", "nodes"])) ?? ""
                let replicas = nodes.split(whereSeparator: \.isNewline).filter { line in
                    let fields = line.split(separator: " ")
                    return fields.count > 2 && fields[2].split(separator: ",").contains("slave")
                }.count
                if !fields.isSuperset(of: ["cluster_state:ok", "cluster_known_nodes:6", "cluster_size:3"])
                    || replicas != 3
                {
                    pending = "port \(port): \(info.prefix(120)), \(replicas) replicas"
                    break
                }
            }
            if pending.isEmpty { return }
            usleep(50_000)
        }
        throw RedisBenchServer.Unavailable(description: "the cluster did not form within 60 s: \(pending)")
    }
}

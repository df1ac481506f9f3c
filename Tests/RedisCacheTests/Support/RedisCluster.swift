import CacheCore
import Foundation
import RedisConnection

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// A loopback Redis Cluster of six `redis-server` child processes, three primaries and a replica each,
/// for the cluster suites (REDIS.md, "Redis Cluster"; Docs/RedisCache.md, "Redis Cluster (in progress)").
///
/// Each node runs with `--cluster-enabled yes --cluster-config-file nodes-PORT.conf --cluster-node-timeout
/// 2000 --enable-debug-command local` on a free port, with its cluster bus on a second free port
/// (`--cluster-port`: `port + 10000` may be taken or past 65535), its files in a temporary folder of this
/// cluster. `redis-cli --cluster create … --cluster-replicas 1 --cluster-yes` joins them (the first three
/// become the primaries), then the harness polls every node until each reports `cluster_state:ok` with six
/// known nodes and three shards and lists three replicas. Every node is a ``RedisServer``: stopped by pid in
/// ``stop()``, when starting fails, at process exit, and by its watcher if this process dies.
///
/// Starting takes 2–9 s on a loaded 2-core machine (mostly `redis-cli`'s own one-second waits for the
/// nodes to agree), so the suites share one cluster per test process (``shared()``) and use keys of their
/// own; tests that change the topology start a cluster of their own.
final class RedisCluster: Sendable {
    /// The nodes in creation order: 0–2 the primaries `redis-cli` chose, 3–5 their replicas.
    let nodes: [RedisServer]
    /// How long ``init()`` took, for the record in Docs/RedisCache.md.
    let startupTime: Duration
    private let folder: URL

    /// Whether the cluster suites run here: `redis-server` and `redis-cli` are installed, or CI demands the
    /// run (and its failure).
    static let suitesRun = RedisServer.suitesRun && RedisCLI.testsRun

    /// The one cluster of this test process, started on first use and stopped at exit.
    static func shared() async throws -> RedisCluster {
        try await sharedStart.value
    }

    private static let sharedStart = Task<RedisCluster, any Error> {
        let cluster = try await RedisCluster()
        sharedForExit.withLock { $0 = cluster }
        // Swift Testing has no end-of-run hook; `atexit` runs when the test process returns from `main`.
        atexit { RedisCluster.sharedForExit.withLock { $0 }?.stop() }
        return cluster
    }
    private static let sharedForExit = Locked<RedisCluster?>(nil)

    /// Starts six nodes and forms the cluster; stops every node it started when any step fails.
    ///
    /// - Throws: ``RedisServer/Missing`` without `redis-server`, ``RedisCLI/Failure`` when
    ///   `redis-cli --cluster create` fails, or ``NotReady`` when the nodes do not agree within 60 s.
    init() async throws {
        let started = ContinuousClock.now
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-cluster-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        var nodes: [RedisServer] = []
        do {
            for _ in 0..<6 {
                nodes.append(try RedisServer { port in try Self.nodeArguments(port: port, folder: folder) })
            }
            let addresses = nodes.map { "127.0.0.1:\($0.port)" }
            try await RedisCLI.run(
                port: nodes[0].port,
                ["--cluster", "create"] + addresses + ["--cluster-replicas", "1", "--cluster-yes"],
                timeout: .seconds(60))
            try await Self.waitUntilFormed(nodes.map(\.port), timeout: .seconds(60))
        } catch {
            for node in nodes { node.stop() }
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        self.nodes = nodes
        self.folder = folder
        self.startupTime = ContinuousClock.now - started
    }

    /// Every node's client port.
    var ports: [Int] { nodes.map(\.port) }

    /// Stops every node by pid and removes the cluster's folder.
    func stop() {
        for node in nodes { node.stop() }
        try? FileManager.default.removeItem(at: folder)
    }

    /// The cluster did not report `cluster_state:ok` on every node in time.
    struct NotReady: Error, CustomStringConvertible {
        var description: String
    }

    /// A connection to the node on `port` that accepts a cluster node (the standalone handshake refuses
    /// one), with loose deadlines for a loaded machine.
    static func connection(port: Int) throws -> RedisConnection {
        var configuration = RedisConnection.Configuration(
            port: port, connectTimeout: .seconds(2), readTimeout: .seconds(30), writeTimeout: .seconds(30),
            keepAliveInterval: .seconds(30))
        configuration.acceptsClusterNode = true
        return try RedisConnection(configuration: configuration)
    }

    /// The options of one node on `port`; its bus port is found once per port, so a restart keeps it.
    private static func nodeArguments(port: Int, folder: URL) throws -> [String] {
        let busPort = try busPorts.withLock { ports in
            if let known = ports[port] { return known }
            let found = try FreePort.find()
            ports[port] = found
            return found
        }
        return [
            "--cluster-enabled", "yes", "--cluster-config-file", "nodes-\(port).conf", "--cluster-node-timeout",
            "2000", "--cluster-port", String(busPort), "--enable-debug-command", "local", "--dir", folder.path,
        ]
    }
    private static let busPorts = Locked<[Int: Int]>([:])

    /// Polls every node every 20 ms until each reports `cluster_state:ok`, six known nodes and three shards,
    /// and three replicas in `CLUSTER NODES`; the nodes' gossip, not a test clock, decides when.
    private static func waitUntilFormed(_ ports: [Int], timeout: Duration) async throws {
        let connections = try ports.map { try connection(port: $0) }
        let deadline = ContinuousClock.now + timeout
        var unformed: String? = "no node answered"
        while ContinuousClock.now < deadline {
            unformed = await firstUnformed(connections)
            if unformed == nil { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        for connection in connections { await connection.close() }
        if let unformed { throw NotReady(description: "the cluster did not form within \(timeout): \(unformed)") }
    }

    /// The first node whose `CLUSTER INFO` does not yet show the whole cluster, or whose `CLUSTER NODES` does
    /// not yet list three replicas (right after `create` the replicas still show as masters without slots for
    /// a moment), with what it said; `nil` when every node does.
    private static func firstUnformed(_ connections: [RedisConnection]) async -> String? {
        for connection in connections {
            let info = (try? await connection.send(RESPCommand("CLUSTER", "INFO")))?.string ?? ""
            let fields = Set(info.split(whereSeparator: \.isNewline).map(String.init))
            if !fields.isSuperset(of: ["cluster_state:ok", "cluster_known_nodes:6", "cluster_size:3"]) {
                return "port \(connection.configuration.port): \(info.prefix(200))"
            }
            // Each line of CLUSTER NODES: id, address, flags (`myself,slave`, `master`, …), primary id, ….
            let nodes = (try? await connection.send(RESPCommand("CLUSTER", "NODES")))?.string ?? ""
            let replicas = nodes.split(whereSeparator: \.isNewline).filter { line in
                let fields = line.split(separator: " ")
                return fields.count > 2 && fields[2].split(separator: ",").contains("slave")
            }
            if replicas.count != 3 { return "port \(connection.configuration.port): \(replicas.count) replicas" }
        }
        return nil
    }
}

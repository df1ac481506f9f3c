import Foundation
import StrataTestSupport
import Testing

/// `strata --redis` on a Redis Cluster (issue 25, "CLI and configuration"): a URL naming a cluster node is
/// enough, extra addresses stand in for a dead first one, and `stats` reports the cluster. A cluster of one node
/// that serves every slot: a real cluster node (`HELLO` answers `mode cluster`, the slot map comes from
/// `CLUSTER SHARDS`), started in well under a second.
@Suite(
    .serialized, .enabled(if: CLIRedisServer.runs, "redis-server not found: CLI Redis tests skipped (CI fails instead)")
)
struct RedisClusterCommandTests {
    @Test func twoStoresShareAValueThroughAClusterNamedByADeadAddressAndANode() throws {
        // Given a one-node cluster, and a URL whose first address has nothing listening
        let node = try Self.clusterNode()
        let dead = try LoopbackPorts.unclaimed()
        let url = "redis://127.0.0.1:\(dead),127.0.0.1:\(node.server.port)/cli-cluster"
        let first = try StrataHarness()
        let second = try StrataHarness()
        let run = { (harness: StrataHarness, arguments: [String]) throws -> StrataResult in
            try RunningStrata(
                arguments: ["--store", harness.store.path, "--redis", url] + arguments, stdin: nil,
                environment: harness.environment(key: first.key, extra: [:]), directory: first.root
            ).wait()
        }
        // When one store sets a value, then the other store reads it through the cluster, without a warning
        let set = try run(first, ["set", "greeting", "hello"])
        #expect(set.status == 0)
        #expect(set.errorText == "")
        let got = try run(second, ["get", "greeting"])
        #expect(got.outputText == "hello")
        #expect(got.errorText == "")
        // And `stats` reports a cluster with the node and a read of its slot map
        let stats = try run(second, ["stats", "--json"])
        #expect(stats.status == 0)
        let object = try JSONSerialization.jsonObject(with: Data(stats.outputText.utf8)) as? [String: Any]
        let redis = object?["redis"] as? [String: Any]
        #expect(redis?["isCluster"] as? Bool == true)
        #expect((redis?["topologyRefreshes"] as? Int ?? 0) >= 1)
        let nodes = redis?["nodes"] as? [String: Any]
        #expect(nodes?["127.0.0.1:\(node.server.port)"] != nil)
        withExtendedLifetime(node) {}
    }

    /// A running one-node cluster and its files.
    final class ClusterNode: Sendable {
        let server: CLIRedisServer
        let folder: URL
        init(server: CLIRedisServer, folder: URL) {
            self.server = server
            self.folder = folder
        }
        deinit {
            server.stop()
            try? FileManager.default.removeItem(at: folder)
        }
    }

    /// Starts a cluster-enabled server, gives it every slot and waits for `cluster_state:ok` (at most 10 s).
    static func clusterNode() throws -> ClusterNode {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-cli-cluster-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The cluster bus needs a port of its own; the default (port + 10,000) may be taken or past 65,535.
        let server = try CLIRedisServer(extraArguments: [
            "--cluster-enabled", "yes", "--cluster-config-file", folder.appendingPathComponent("nodes.conf").path,
            "--cluster-port", String(try LoopbackPorts.unclaimed()),
        ])
        let node = ClusterNode(server: server, folder: folder)
        #expect(try redisCLI(port: server.port, ["CLUSTER", "ADDSLOTSRANGE", "0", "16383"]) == "OK")
        for _ in 0..<1000 {
            if try redisCLI(port: server.port, ["CLUSTER", "INFO"]).contains("cluster_state:ok") { return node }
            usleep(10_000)
        }
        throw CocoaError(.fileReadUnknown)
    }

    /// `redis-cli -p port arguments…`'s output, trimmed.
    static func redisCLI(port: Int, _ arguments: [String]) throws -> String {
        let process = try ChildProcess(
            "redis-cli", ["-p", String(port)] + arguments, standardOutput: .pipe, searchPath: true)
        let output = process.standardOutput?.readDataToEndOfFile() ?? Data()
        process.waitUntilExit()
        return String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

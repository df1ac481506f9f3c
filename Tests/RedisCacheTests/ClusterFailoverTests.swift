import Foundation
import Testing

@testable import RedisConnection

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// A primary of a real loopback cluster stopped with `SIGSTOP`: only the commands on its slots fail, its
/// replica's promotion is found by the next commands, and the old primary's connection is closed once the map
/// names it a replica. A cluster of its own: the failover changes the map the other suites route by.
@Suite(.serialized, .enabled(if: RedisCluster.suitesRun, RedisServer.skipNote), .timeLimit(.minutes(10)))
struct ClusterFailoverTests {
    @Test func aStoppedPrimaryFailsOnlyItsSlotsAndThePromotedReplicaIsFound() async throws {
        // Given a cluster, a connection seeded with one replica of another shard, and keys on every primary
        // (replicated before the stop, so the promoted replica holds them)
        let cluster = try await RedisCluster()
        defer { cluster.stop() }
        let topology = try await ClusterConnection(configuration: Self.configuration(seed: cluster.ports[0]))
            .refreshTopologyAndClose()
        let stopped = topology.shards[0]
        let replica = try #require(stopped.replicas.first?.address)
        let seed = try #require(topology.shards[1].replicas.first?.address)
        var configuration = Self.configuration(seed: seed.port)
        configuration.node.clientName = "strata-failover-\(seed.port)"
        let connection = ClusterConnection(configuration: configuration)
        let keys = Self.keys(perPrimaryOf: topology, count: 8)
        for key in keys.values.joined() {
            _ = try await connection.send(RESPCommand(arguments: [Array("SET".utf8), key, key]), key: key)
        }
        for primary in topology.primaries {
            let node = try RedisCluster.connection(port: primary.port)
            #expect(try await node.send(RESPCommand("WAIT", "1", "10000")) == .integer(1))
            await node.close()
        }
        let stoppedKeys = try #require(keys[stopped.primary.address])
        let otherKeys = keys.filter { $0.key != stopped.primary.address }.values.joined()

        // When one primary stops answering, on a cluster that keeps serving the slots it still covers and
        // whose replica of the stopped primary waits to be told before it takes over
        try await Self.configure(topology.primaries + [replica], "cluster-require-full-coverage", "no")
        try await Self.configure([replica], "cluster-replica-no-failover", "yes")
        let stoppedServer = try #require(cluster.nodes.first { $0.port == stopped.primary.address.port })
        stoppedServer.signal(SIGSTOP)
        defer { stoppedServer.signal(SIGCONT) }

        // Then every command on the other primaries' slots succeeds, and every command on the stopped
        // primary's slots fails: with a timeout, and at once when its breaker has opened
        for key in otherKeys {
            let reply = try await connection.send(RESPCommand(arguments: [Array("GET".utf8), key]), key: key)
            #expect(reply == .bulkString(key))
        }
        // (the breaker's background probes and the idle connection's keep-alives count failures too, so how many
        // commands time out before it opens depends on timing: at most three, and none when the keep-alives
        // opened it while the other primaries' commands ran, as under ThreadSanitizer on 2 loaded cores in CI)
        var failures: [ConnectionError.Code] = []
        for key in stoppedKeys where failures.last != .unavailable {
            do {
                _ = try await connection.send(RESPCommand(arguments: [Array("GET".utf8), key]), key: key)
                Issue.record("a command on the stopped primary's slot succeeded")
            } catch let error as ConnectionError {
                failures.append(error.code)
            }
        }
        #expect(failures.dropLast().allSatisfy { $0 == .deadlineExceeded || $0 == .connectFailed })
        #expect(failures.count <= 4)
        #expect(failures.last == .unavailable)
        // And the failures are the stopped node's alone
        let nodes = connection.nodeStatistics
        #expect(nodes[stopped.primary.address].map { $0.breakerOpenings >= 1 } == true)
        for primary in topology.primaries where primary != stopped.primary.address {
            #expect(nodes[primary].map { $0.deadlineMisses == 0 && $0.breakerOpenings == 0 } == true)
        }

        // When the replica may take over (however long the primary has been gone) and has been promoted
        try await Self.configure([replica], "cluster-replica-validity-factor", "0")
        try await Self.configure([replica], "cluster-replica-no-failover", "no")
        try await Self.waitUntilPrimary(port: replica.port, timeout: .seconds(60))
        let reportedOK = ContinuousClock.now
        // Then the next commands find it: a stopped primary's key reads its value through the new primary
        var found: Duration?
        while found == nil, ContinuousClock.now - reportedOK < .seconds(60) {
            let key = stoppedKeys[0]
            let reply = try? await connection.send(RESPCommand(arguments: [Array("GET".utf8), key]), key: key)
            if reply == .bulkString(key) {
                found = ContinuousClock.now - reportedOK
            } else {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        let delay = try #require(found, "the promoted replica was not found within 60 s of the cluster's ok")
        print("ClusterFailoverTests: the promoted replica was found \(delay) after the cluster reported ok")
        #expect(connection.topology?.primary(for: HashSlot(key: stoppedKeys[0])) == replica)
        for key in stoppedKeys {
            #expect(
                try await connection.send(RESPCommand(arguments: [Array("GET".utf8), key]), key: key)
                    == .bulkString(key))
        }
        // And the stopped primary's connection was closed by the map read that found its replacement
        #expect(!connection.connectedAddresses.contains(stopped.primary.address))
        #expect(connection.statistics.retiredConnections == 1)

        // When the old primary resumes (it rejoins as a replica) and the map is read again
        stoppedServer.signal(SIGCONT)
        try await Self.waitUntilReplica(port: stopped.primary.address.port, timeout: .seconds(60))
        let after = try await connection.refreshTopology()
        // Then it routes nothing to it and opens no connection to it
        #expect(!after.primaries.contains(stopped.primary.address))
        #expect(!connection.connectedAddresses.contains(stopped.primary.address))
        #expect(connection.statistics.retiredConnections == 1)
        // And the retired socket is really closed: the resumed node read its end of file and lists no client
        // of this connection
        let old = try RedisCluster.connection(port: stopped.primary.address.port)
        let clients = try await old.send(RESPCommand("CLIENT", "LIST"))
        await old.close()
        let list = try #require(clients.string)
        #expect(!list.contains("name=\(configuration.node.clientName) "))
        #expect(list.contains("cmd=client"))
        await connection.close()
    }

    /// A read deadline short enough for a stopped node to fail fast and long enough for a loaded machine;
    /// operations may take a minute, so no retry of a passing cluster state runs out of time on a slow one.
    static func configuration(seed port: Int) -> ClusterConnection.Configuration {
        var node = RedisConnection.Configuration(
            connectTimeout: .seconds(2), readTimeout: .seconds(3), writeTimeout: .seconds(3),
            keepAliveInterval: .seconds(30))
        node.breaker = CircuitBreaker(failureThreshold: 3)
        var configuration = ClusterConnection.Configuration(seeds: [.init(host: "127.0.0.1", port: port)], node: node)
        configuration.operationTimeout = .seconds(60)
        return configuration
    }

    /// `CONFIG SET parameter value` on each node of `nodes`.
    static func configure(_ nodes: [RedisConnection.Address], _ parameter: String, _ value: String) async throws {
        for address in nodes {
            let node = try RedisCluster.connection(port: address.port)
            let reply = try await node.send(RESPCommand("CONFIG", "SET", parameter, value))
            await node.close()
            #expect(reply == .simpleString("OK"))
        }
    }

    /// `count` keys per primary of `topology`.
    static func keys(perPrimaryOf topology: ClusterTopology, count: Int) -> [RedisConnection.Address: [[UInt8]]] {
        var keys: [RedisConnection.Address: [[UInt8]]] = [:]
        let prefix = "failover-\(UUID().uuidString)-"
        var index = 0
        while keys.values.map(\.count).reduce(0, +) < count * topology.primaries.count {
            let key = Array("\(prefix)\(index)".utf8)
            index += 1
            guard let primary = topology.primary(for: HashSlot(key: key)), keys[primary, default: []].count < count
            else { continue }
            keys[primary, default: []].append(key)
        }
        return keys
    }

    /// Polls the node on `port` every 20 ms until it is a primary and reports `cluster_state:ok`.
    static func waitUntilPrimary(port: Int, timeout: Duration) async throws {
        try await waitUntil(port: port, role: "master", timeout: timeout)
    }

    /// Polls the node on `port` every 20 ms until it is a replica and reports `cluster_state:ok`.
    static func waitUntilReplica(port: Int, timeout: Duration) async throws {
        try await waitUntil(port: port, role: "slave", timeout: timeout)
    }

    private static func waitUntil(port: Int, role: String, timeout: Duration) async throws {
        let node = try RedisCluster.connection(port: port)
        let deadline = ContinuousClock.now + timeout
        var last = "no reply"
        while ContinuousClock.now < deadline {
            let reply = try? await node.send(RESPCommand("ROLE"))
            let info = (try? await node.send(RESPCommand("CLUSTER", "INFO")))?.string ?? ""
            if case .array(let fields)? = reply, fields.first?.string == role, info.contains("cluster_state:ok") {
                await node.close()
                return
            }
            last = "\(String(describing: reply)) \(info.prefix(40))"
            try await Task.sleep(for: .milliseconds(20))
        }
        await node.close()
        throw RedisCluster.NotReady(description: "the node on \(port) did not become \(role) in \(timeout): \(last)")
    }
}

extension ClusterConnection {
    /// Reads the map once and closes every connection the read opened.
    func refreshTopologyAndClose() async throws -> ClusterTopology {
        let topology: ClusterTopology
        do { topology = try await refreshTopology() } catch {
            await close()
            throw error
        }
        await close()
        return topology
    }
}

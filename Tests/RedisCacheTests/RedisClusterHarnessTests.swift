import Foundation
import StrataTestSupport
import Testing

@testable import RedisConnection

/// The loopback test cluster itself, and the one fact everything else routes by: a key's slot, computed
/// here exactly as the server computes it.
@Suite(.enabled(if: RedisCluster.suitesRun, RedisServer.skipNote))
struct RedisClusterHarnessTests {
    @Test func formsThreeShardsOfAPrimaryAndAReplicaEach() async throws {
        // Given the shared cluster
        let cluster = try await RedisCluster.shared()
        print("cluster of 6 nodes formed in \(cluster.startupTime)")
        // Then every node is up and serves exactly one of the two roles, three of each
        var roles: [String] = []
        for port in cluster.ports {
            let connection = try RedisCluster.connection(port: port)
            let role = try await RedisTesting.settingUp {
                guard case .array(let parts) = try await connection.send(RESPCommand("ROLE")),
                    let role = parts.first?.string, role == "master" || role == "slave"
                else { throw RedisCluster.NotReady(description: "port \(port) has no role yet") }
                return role
            }
            roles.append(role)
            await connection.close()
        }
        #expect(roles.filter { $0 == "master" }.count == 3)
        #expect(roles.filter { $0 == "slave" }.count == 3)
    }

    @Test func slotsEqualTheServersKeyslotForRandomKeys() async throws {
        // Given 100,000 random keys, most built from braces and two letters so that tags, empty tags, a `{`
        // without `}` and nested braces are frequent, a quarter of them arbitrary bytes
        var random = SplitMix64(seed: 0x5107_2025)
        let alphabet: [UInt8] = Array("{}{}ab".utf8)
        let keys: [[UInt8]] = (0..<100_000).map { index in
            let length = Int.random(in: 0...16, using: &random)
            return (0..<length).map { _ in
                index % 4 == 0
                    ? UInt8.random(in: 0...255, using: &random)
                    : (Int.random(in: 0..<10, using: &random) == 0
                        ? UInt8.random(in: 0...255, using: &random) : alphabet.randomElement(using: &random)!)
            }
        }
        let cluster = try await RedisCluster.shared()
        let connection = try RedisCluster.connection(port: cluster.ports[0])
        // When the server is asked for each key's slot (pipelined)
        let started = ContinuousClock.now
        let replies = try await Pipeline.send(
            keys.map { RESPCommand(arguments: [Array("CLUSTER".utf8), Array("KEYSLOT".utf8), $0]) }, on: connection)
        print("CLUSTER KEYSLOT of \(keys.count) keys pipelined in \(ContinuousClock.now - started)")
        await connection.close()
        // Then every key's slot here is the server's
        var mismatches: [String] = []
        for (key, reply) in zip(keys, replies) where reply != .integer(Int64(HashSlot(key: key).rawValue)) {
            mismatches.append("\(key): server \(reply), here \(HashSlot(key: key))")
        }
        #expect(mismatches.isEmpty, "\(mismatches.count) mismatches, first: \(mismatches.prefix(3))")
        #expect(keys.contains { $0.isEmpty })
        #expect(keys.contains(Array("{}".utf8)) || keys.contains { $0.starts(with: Array("{}".utf8)) })
    }
}

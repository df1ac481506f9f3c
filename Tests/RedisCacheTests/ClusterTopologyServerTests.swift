import Foundation
import Testing

@testable import RedisConnection

/// The slot map read from the real loopback cluster: `CLUSTER SHARDS` and `CLUSTER SLOTS` agree, and the map
/// sends every key to the primary that accepts it.
@Suite(.enabled(if: RedisCluster.suitesRun, RedisServer.skipNote))
struct ClusterTopologyServerTests {
    @Test func shardsAndSlotsRepliesGiveTheSameMapOfThreePrimariesWithAReplicaEach() async throws {
        // Given the shared cluster
        let cluster = try await RedisCluster.shared()
        let connection = try RedisCluster.connection(port: cluster.ports[4])
        // When its map is read both ways (from a replica: any node answers), once every replica is listed
        let (shards, slots) = try await RedisTesting.settingUp {
            let shards = try ClusterTopology(
                shardsReply: try await connection.send(RESPCommand("CLUSTER", "SHARDS")), queriedHost: "127.0.0.1")
            let slots = try ClusterTopology(
                slotsReply: try await connection.send(RESPCommand("CLUSTER", "SLOTS")), queriedHost: "127.0.0.1")
            guard shards.shards.allSatisfy({ $0.replicas.count == 1 }),
                slots.shards.allSatisfy({ $0.replicas.count == 1 })
            else { throw RedisCluster.NotReady(description: "replicas not listed yet") }
            // Another suite moves a slot of its own meanwhile: both replies must come from one state of the map.
            guard Self.disagreement(shards, slots) == nil else {
                throw RedisCluster.NotReady(description: "the map changed between the replies")
            }
            return (shards, slots)
        }
        await connection.close()
        // Then three primaries serve every slot, each with one replica, and both replies agree slot by slot
        #expect(shards.coversAllSlots)
        #expect(Set(shards.primaries.map(\.port)) == Set(cluster.ports[0..<3]))
        #expect(Set(shards.shards.flatMap(\.replicas).map(\.address.port)) == Set(cluster.ports[3..<6]))
        #expect(shards.shards.allSatisfy { $0.primary.health == .online && $0.primary.id?.count == 40 })
        #expect(Self.disagreement(shards, slots) == nil)
        #expect(Set(slots.shards.flatMap(\.replicas).map(\.address.port)) == Set(cluster.ports[3..<6]))
    }

    @Test func everyKeyIsAcceptedByThePrimaryTheMapNames() async throws {
        // Given the map and a connection to each primary
        let cluster = try await RedisCluster.shared()
        let first = try RedisCluster.connection(port: cluster.ports[0])
        let topology = try ClusterTopology(
            shardsReply: try await first.send(RESPCommand("CLUSTER", "SHARDS")), queriedHost: "127.0.0.1")
        await first.close()
        var connections: [Int: RedisConnection] = [:]
        for address in topology.primaries {
            connections[address.port] = try RedisCluster.connection(port: address.port)
        }
        // When 300 keys are each written to the primary the map names for their slot
        var perPrimary: [Int: Int] = [:]
        for index in 0..<300 {
            let key = "topology-test:\(index)"
            let port = try #require(topology.primary(for: HashSlot(key: key))?.port)
            // Then each write is accepted there: a wrong primary answers MOVED (ASK is the right primary with
            // the slot migrating: another suite moves a slot of its own at the same time)
            do {
                let reply = try await connections[port]!.send(RESPCommand("SET", key, "v", "PX", "60000"))
                #expect(reply == .simpleString("OK"), "\(key) on \(port)")
            } catch let error as ConnectionError where error.code == .ask {
            } catch let error as ConnectionError where error.code == .moved {
                // Another suite finished moving this key's slot after the map was read: a map read now must
                // name another primary for it, or the redirect is this map's mistake.
                let now = try ClusterTopology(
                    shardsReply: try await connections[port]!.send(RESPCommand("CLUSTER", "SHARDS")),
                    queriedHost: "127.0.0.1")
                #expect(now.primary(for: HashSlot(key: key))?.port != port, "\(key): MOVED, but \(port) serves it")
                continue
            }
            perPrimary[port, default: 0] += 1
        }
        #expect(perPrimary.count == 3)
        #expect(perPrimary.values.allSatisfy { $0 >= 60 })
        for connection in connections.values { await connection.close() }
    }

    /// The first slot whose primary differs between the two maps, or `nil`.
    private static func disagreement(_ first: ClusterTopology, _ second: ClusterTopology) -> Int? {
        (0..<HashSlot.count).first { number in
            let slot = HashSlot(rawValue: number)!
            return first.primary(for: slot) != second.primary(for: slot)
        }
    }
}

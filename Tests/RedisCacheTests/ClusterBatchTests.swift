import CacheCore
import Testing

@testable import RedisConnection

/// A batch's failures stay per command and inside the batch's one deadline, against a scripted node in
/// cluster mode whose map may leave slots without a primary.
@Suite struct ClusterBatchTests {
    @Test func aSlotWithoutPrimaryFailsOnlyItsCommandsWithATypedError() async throws {
        // Given a node that serves slots 0…8191 and a map in which no primary serves 8192…16383
        let node = try BatchNode(lastServedSlot: 8_191) { _ in "$1\r\nv\r\n" }
        let connection = node.connection(operationTimeout: .milliseconds(200))
        let served = Self.key { $0 <= 8_191 }
        let orphan = Self.key { $0 > 8_191 }

        // When a batch reads a key of each half
        let results = try await connection.send(batch: [
            (RESPCommand("GET", served), Array(served.utf8)), (RESPCommand("GET", orphan), Array(orphan.utf8)),
        ])
        // Then the served key's command succeeds and only the other one fails, with CLUSTERDOWN
        #expect(results.count == 2)
        #expect(try results[0].get() == .bulkString(Array("v".utf8)))
        #expect(throws: ConnectionError.self) { try results[1].get() }
        if case .failure(let error as ConnectionError) = results[1] {
            #expect(error.code == .serverError)
            #expect(error.message.hasPrefix("CLUSTERDOWN"))
        }
        await connection.close()
    }

    /// The first key of the form `k<n>` whose slot satisfies `accepts`.
    private static func key(where accepts: (Int) -> Bool) -> String {
        (0...).lazy.map { "k\($0)" }.first { accepts(HashSlot(key: Array($0.utf8)).rawValue) }!
    }
}

/// A scripted node in cluster mode, the primary of slots 0 through `lastServedSlot` (the rest have none);
/// `get` gives the reply to the n-th `GET`.
private final class BatchNode: Sendable {
    let server: ScriptedServer
    let gets = Locked(0)

    init(lastServedSlot: Int, get: @escaping @Sendable (Int) -> String) throws {
        let port = Locked(0)
        let gets = self.gets
        server = try ScriptedServer { command in
            switch command.first?.uppercased() {
            case "HELLO": return "%2\r\n$4\r\nmode\r\n$7\r\ncluster\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
            case "CLUSTER":
                let own = String(port.withLock { $0 })
                return "*1\r\n%2\r\n$5\r\nslots\r\n*2\r\n:0\r\n:\(lastServedSlot)\r\n$5\r\nnodes\r\n*1\r\n%3\r\n"
                    + "$4\r\nport\r\n:\(own)\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
            case "GET":
                return get(
                    gets.withLock { count in
                        count += 1
                        return count
                    })
            default: return "+OK\r\n"
            }
        }
        port.withLock { $0 = server.port }
    }

    /// A connection seeded with this node, retrying a passing state every millisecond.
    func connection(operationTimeout: Duration) -> ClusterConnection {
        var configuration = ClusterConnection.Configuration(
            seeds: [.init(host: "127.0.0.1", port: server.port)],
            node: .init(readTimeout: .seconds(60), writeTimeout: .seconds(60), keepAliveInterval: .seconds(60)))
        configuration.operationTimeout = operationTimeout
        configuration.retryDelay = .milliseconds(1)
        return ClusterConnection(configuration: configuration)
    }
}

import CacheCore
import Testing

@testable import RedisConnection

/// `TRYAGAIN`, `CLUSTERDOWN` and `LOADING` from a scripted one-node cluster: retried with backoff inside the
/// operation's deadline, then thrown as they came.
@Suite struct ClusterConnectionRetryTests {
    @Test(arguments: [
        "TRYAGAIN Multiple keys request during rehashing of slot", "CLUSTERDOWN The cluster is down",
        "LOADING Redis is loading the dataset in memory",
    ])
    func retriesAPassingStateUntilTheCommandSucceeds(error: String) async throws {
        // Given a node that answers GET with `error` twice, then with the value
        let (server, gets) = try scriptedNode { getCount in getCount <= 2 ? "-\(error)\r\n" : "$5\r\nvalue\r\n" }
        // A deadline no stalled scheduler reaches: the whole suite in parallel on 2 cores under TSan has held
        // this task back for over 30 s between attempts, and the retry rule, not the deadline, is tested here
        let connection = makeConnection(port: server.port, operationTimeout: .seconds(3_600))
        // When the key is read
        let reply = try await connection.send(RESPCommand("GET", "k"), key: Array("k".utf8))
        // Then the third attempt's value is returned after two retries
        #expect(reply == .bulkString(Array("value".utf8)))
        #expect(gets.withLock { $0 } == 3)
        #expect(connection.statistics.retries == 2)
        await connection.close()
    }

    @Test func throwsTheStateOnceTheDeadlineLeavesNoTimeToRetry() async throws {
        // Given a node that answers TRYAGAIN forever, and a 100 ms operation deadline with retries from 5 ms
        let (server, gets) = try scriptedNode { _ in "-TRYAGAIN Multiple keys request during rehashing of slot\r\n" }
        let connection = makeConnection(port: server.port, operationTimeout: .milliseconds(100))
        // When the key is read, then the reply's own error is thrown
        let error = await #expect(throws: ConnectionError.self) {
            try await connection.send(RESPCommand("GET", "k"), key: Array("k".utf8))
        }
        #expect(error?.message.hasPrefix("TRYAGAIN") == true)
        // after no more retries than the doubling waits (5, 10, 20, 40 ms) fit in the deadline: a slow machine
        // may fit fewer, none may fit more (that retries happen at all is the test above)
        #expect(connection.statistics.retries <= 4)
        #expect(gets.withLock { $0 } == connection.statistics.retries + 1)
        await connection.close()
    }

    @Test func anErrorThatIsNotACLusterStateIsThrownAtOnce() async throws {
        let (server, gets) = try scriptedNode { _ in "-WRONGTYPE Operation against a key holding the wrong kind\r\n" }
        let connection = makeConnection(port: server.port, operationTimeout: .seconds(3_600))
        let error = await #expect(throws: ConnectionError.self) {
            try await connection.send(RESPCommand("GET", "k"), key: Array("k".utf8))
        }
        #expect(error?.code == .serverError)
        #expect(gets.withLock { $0 } == 1)
        #expect(connection.statistics.retries == 0)
        await connection.close()
    }

    // MARK: - A one-node cluster

    /// A scripted node in cluster mode serving every slot itself; `get` gives the reply to the n-th `GET`.
    private func scriptedNode(
        get: @escaping @Sendable (Int) -> String
    ) throws -> (ScriptedServer, Locked<Int>) {
        let node = try ScriptedClusterNode(get: get)
        return (node.server, node.gets)
    }

    private func makeConnection(port: Int, operationTimeout: Duration) -> ClusterConnection {
        var configuration = ClusterConnection.Configuration(
            seeds: [.init(host: "127.0.0.1", port: port)],
            node: .init(readTimeout: .seconds(5), writeTimeout: .seconds(5), keepAliveInterval: .seconds(60)))
        configuration.operationTimeout = operationTimeout
        return ClusterConnection(configuration: configuration)
    }
}

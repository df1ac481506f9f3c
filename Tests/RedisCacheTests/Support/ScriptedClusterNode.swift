import CacheCore

@testable import RedisConnection

/// A scripted node in cluster mode, the primary of slots 0 through `lastServedSlot` (the rest have none);
/// `get` gives the reply to the n-th `GET`.
final class ScriptedClusterNode: Sendable {
    let server: ScriptedServer
    let gets = Locked(0)

    init(lastServedSlot: Int = 16_383, get: @escaping @Sendable (Int) -> String) throws {
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

    /// A connection seeded with this node, retrying a passing state every millisecond, whose deadlines and
    /// refresh intervals read `now`.
    func connection(
        operationTimeout: Duration, now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) -> ClusterConnection {
        var configuration = ClusterConnection.Configuration(
            seeds: [.init(host: "127.0.0.1", port: server.port)],
            node: .init(readTimeout: .seconds(60), writeTimeout: .seconds(60), keepAliveInterval: .seconds(60)))
        configuration.operationTimeout = operationTimeout
        configuration.retryDelay = .milliseconds(1)
        configuration.now = now
        return ClusterConnection(configuration: configuration)
    }
}

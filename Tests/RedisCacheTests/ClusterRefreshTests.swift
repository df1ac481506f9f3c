import CacheCore
import Dispatch
import Testing

@testable import RedisConnection

/// The slot map read again after redirects and failures: once per burst, never more often than the
/// minimum interval, against two scripted nodes whose map the test moves (time stepped by hand).
@Suite struct ClusterRefreshTests {
    @Test func aBurstOfMovedRepliesReadsTheMapOnceAndOnlyAfterTheInterval() async throws {
        // Given two nodes, A serving every slot, and a connection that has read that map
        let cluster = try TwoNodeCluster()
        let now = Locked(ContinuousClock.now)
        let connection = cluster.connection(now: now)
        #expect(
            try await connection.send(RESPCommand("GET", "k0"), key: Array("k0".utf8)) == .bulkString(Array("a".utf8)))
        #expect(connection.statistics.topologyRefreshes == 1)

        // When every slot moves to B and 50 keys are read at once, inside the interval since the first read
        cluster.moveEverySlotToB()
        let keys = (1...50).map { "k\($0)" }
        try await readAll(keys, through: connection, expecting: "b")
        // Then each read followed its MOVED, and none read the map again
        #expect(connection.statistics.movedRedirects == 50)
        #expect(connection.statistics.backgroundRefreshes == 0)
        #expect(connection.statistics.topologyRefreshes == 1)

        // When the interval has passed and another 50 keys are read at once
        now.withLock { $0 += .seconds(11) }
        let more = (51...100).map { "k\($0)" }
        try await readAll(more, through: connection, expecting: "b")
        // Then the burst of MOVED replies started one read of the map, not one per redirect
        #expect(connection.statistics.backgroundRefreshes == 1)
        await connection.waitForRefresh()
        #expect(connection.statistics.topologyRefreshes == 2)
        // And that read put B in the map for slots no command had been redirected from: the next key goes
        // straight to B
        let redirectsBefore = connection.statistics.movedRedirects
        let untouched = try #require(
            (101...10_000).lazy.map { "k\($0)" }.first { key in
                ![keys, more].joined().contains { HashSlot(key: Array($0.utf8)) == HashSlot(key: Array(key.utf8)) }
            })
        #expect(
            try await connection.send(RESPCommand("GET", untouched), key: Array(untouched.utf8))
                == .bulkString(Array("b".utf8)))
        #expect(connection.statistics.movedRedirects == redirectsBefore)
        await connection.close()
    }

    @Test func aRedirectPutOffByTheIntervalIsReadByTheFirstCommandAfterIt() async throws {
        // Given a connection that has read the map (A serves every slot), and a burst of MOVED replies inside
        // the interval once every slot has moved to B (each read's own slot put in the map, no map read)
        let cluster = try TwoNodeCluster()
        let now = Locked(ContinuousClock.now)
        let connection = cluster.connection(now: now)
        _ = try await connection.send(RESPCommand("GET", "k0"), key: Array("k0".utf8))
        cluster.moveEverySlotToB()
        let keys = (1...20).map { "k\($0)" }
        try await readAll(keys, through: connection, expecting: "b")
        #expect(connection.statistics.backgroundRefreshes == 0)

        // When the interval has passed and a key already redirected is read (no MOVED this time)
        now.withLock { $0 += .seconds(11) }
        #expect(
            try await connection.send(RESPCommand("GET", "k1"), key: Array("k1".utf8)) == .bulkString(Array("b".utf8)))
        await connection.waitForRefresh()

        // Then that command started the read the burst was denied, and the map names B for every slot
        #expect(connection.statistics.backgroundRefreshes == 1)
        #expect(connection.statistics.topologyRefreshes == 2)
        #expect(connection.topology?.primaries == [cluster.addressB])
        // And the read was owed once: later commands start none until a new trigger
        now.withLock { $0 += .seconds(11) }
        _ = try await connection.send(RESPCommand("GET", "k2"), key: Array("k2".utf8))
        #expect(connection.statistics.backgroundRefreshes == 1)
        await connection.close()
    }

    @Test func aMapOlderThanThePeriodicIntervalIsReadAgainByTheNextCommand() async throws {
        // Given a connection that has read the map (A serves every slot)
        let cluster = try TwoNodeCluster()
        let now = Locked(ContinuousClock.now)
        let connection = cluster.connection(now: now)
        _ = try await connection.send(RESPCommand("GET", "k0"), key: Array("k0".utf8))

        // When a command runs while the map is younger than the periodic interval (30 s)
        now.withLock { $0 += .seconds(29) }
        _ = try await connection.send(RESPCommand("GET", "k1"), key: Array("k1".utf8))
        // Then it reads no map
        #expect(connection.statistics.periodicRefreshes == 0)
        #expect(connection.statistics.topologyRefreshes == 1)

        // When every slot moves to B unnoticed, and a command runs once the map is 30 s old
        cluster.moveEverySlotToB()
        now.withLock { $0 += .seconds(1) }
        _ = try await connection.send(RESPCommand("GET", "k2"), key: Array("k2".utf8))
        await connection.waitForRefresh()
        // Then that command started one read, for the map's age, and the map now names B
        #expect(connection.statistics.periodicRefreshes == 1)
        #expect(connection.statistics.backgroundRefreshes == 0)
        #expect(connection.statistics.topologyRefreshes == 2)
        #expect(connection.topology?.primaries == [cluster.addressB])
        await connection.close()
    }

    @Test func aReadOfTheMapAsksANodeWhoseLastCommandFailedLast() async throws {
        // Given a connection seeded with A then B that has read the map (A serves every slot)
        let cluster = try TwoNodeCluster()
        let now = Locked(ContinuousClock.now)
        let connection = cluster.connection(now: now)
        _ = try await connection.send(RESPCommand("GET", "k0"), key: Array("k0".utf8))

        // When B takes every slot and A fails a command (it hangs up)
        cluster.moveEverySlotToB()
        cluster.stopA()
        await #expect(throws: ConnectionError.self) {
            _ = try await connection.send(RESPCommand("GET", "k1"), key: Array("k1".utf8))
        }
        // And the map is read
        let topology = try await connection.refreshTopology()
        // Then B was asked first: no node failed the read, and the map names B
        #expect(topology.primaries == [cluster.addressB])
        #expect(connection.statistics.mapReadFailures == 0)
        await connection.close()
    }

    @Test func aNodeThatStopsAnsweringStartsAReadOfTheMap() async throws {
        // Given two nodes, A serving every slot, and a connection that read that map long ago
        let cluster = try TwoNodeCluster()
        let now = Locked(ContinuousClock.now)
        let connection = cluster.connection(now: now)
        _ = try await connection.send(RESPCommand("GET", "k0"), key: Array("k0".utf8))
        now.withLock { $0 += .seconds(11) }

        // When B takes over (a failover) and A refuses connections
        cluster.moveEverySlotToB()
        cluster.stopA()
        // Then a read fails, and starts a read of the map, from B, which names B
        await #expect(throws: ConnectionError.self) {
            _ = try await connection.send(RESPCommand("GET", "k1"), key: Array("k1".utf8))
        }
        #expect(connection.statistics.backgroundRefreshes == 1)
        await connection.waitForRefresh()
        #expect(connection.statistics.topologyRefreshes == 2)
        // And the next read goes to B
        #expect(
            try await connection.send(RESPCommand("GET", "k1"), key: Array("k1".utf8)) == .bulkString(Array("b".utf8)))
        await connection.close()
    }

    @Test func aNodeTheMapNoLongerNamesHasItsConnectionClosedOnceIdle() async throws {
        // Given a connection seeded with B only, that has read a map in which A serves every slot, and has
        // used A
        let cluster = try TwoNodeCluster()
        let now = Locked(ContinuousClock.now)
        let connection = cluster.connection(now: now, seedingA: false)
        #expect(
            try await connection.send(RESPCommand("GET", "k0"), key: Array("k0".utf8)) == .bulkString(Array("a".utf8)))
        #expect(connection.connectedAddresses == [cluster.addressA, cluster.addressB])

        // When the slots move to B and the map is read again
        cluster.moveEverySlotToB()
        try await connection.refreshTopology()
        // Then A's connection is retired and closed, B's stays
        #expect(connection.connectedAddresses == [cluster.addressB])
        #expect(connection.statistics.retiredConnections == 1)
        #expect(connection.retiredConnectionsInUse == 0)
        // And A sees its socket closed: the client's end of file ended its only connection
        #expect(await cluster.waitUntilAHasNoClient())
        // And a command for A's old slots goes to B
        #expect(
            try await connection.send(RESPCommand("GET", "k1"), key: Array("k1".utf8)) == .bulkString(Array("b".utf8)))
        await connection.close()
    }

    @Test func aRetiredConnectionFinishesTheCommandsOnItBeforeItCloses() async throws {
        // Given a connection seeded with B only, with a command pending on A (A holds its reply)
        let cluster = try TwoNodeCluster()
        let now = Locked(ContinuousClock.now)
        let connection = cluster.connection(now: now, seedingA: false)
        let pending = Task { try await connection.send(RESPCommand("GET", "slow"), key: Array("slow".utf8)) }
        await cluster.waitUntilAReceives("slow")

        // When a map in which B serves every slot is put in use (installed directly: a read would ask A
        // first, behind the held reply)
        let moved = try ClusterTopology(shards: [.init(slots: [0...16383], primary: .init(address: cluster.addressB))])
        let idle = connection.install(moved)
        // Then A no longer takes commands, but its connection stays open for the one pending on it
        #expect(idle.isEmpty)
        #expect(connection.connectedAddresses == [cluster.addressB])
        #expect(connection.retiredConnectionsInUse == 1)
        #expect(cluster.clientsOfA == 1)

        // When A answers
        cluster.releaseSlowReply()
        // Then the pending command gets A's reply, and the connection is closed after it
        #expect(try await pending.value == .bulkString(Array("a".utf8)))
        #expect(connection.retiredConnectionsInUse == 0)
        #expect(connection.statistics.retiredConnections == 1)
        #expect(await cluster.waitUntilAHasNoClient())
        await connection.close()
    }

    @Test func aRouteReadFromAReplacedMapOpensNoConnectionToTheNodeItRetired() async throws {
        // Given a connection seeded with B only, that has used A, and a route to A read from that map
        let cluster = try TwoNodeCluster()
        let now = Locked(ContinuousClock.now)
        let connection = cluster.connection(now: now, seedingA: false)
        _ = try await connection.send(RESPCommand("GET", "k0"), key: Array("k0".utf8))
        let route = try await connection.primary(for: HashSlot(key: Array("k1".utf8)), deadline: .now + .seconds(60))
        #expect(route.address == cluster.addressA)

        // When a map naming B for every slot is put in use before the command leases its connection
        cluster.moveEverySlotToB()
        try await connection.refreshTopology()
        #expect(await cluster.waitUntilAHasNoClient())
        // Then the lease by the old route is refused, and opens no connection to A
        await #expect(throws: ClusterConnection.StaleRoute.self) {
            _ = try await connection.withConnection(to: route) { try await $0.send(RESPCommand("GET", "k1")) }
        }
        #expect(connection.connectedAddresses == [cluster.addressB])
        #expect(cluster.clientsOfA == 0)
        // And a route read from the map in use still reaches its node
        let current = try await connection.primary(for: HashSlot(key: Array("k1".utf8)), deadline: .now + .seconds(60))
        #expect(
            try await connection.withConnection(to: current) { try await $0.send(RESPCommand("GET", "k1")) }
                == .bulkString(Array("b".utf8)))
        await connection.close()
    }

    @Test func aBatchFollowingMovedPutsTheSlotInTheMap() async throws {
        // Given a connection that has read a map in which A serves every slot
        let cluster = try TwoNodeCluster()
        let now = Locked(ContinuousClock.now)
        let connection = cluster.connection(now: now)
        _ = try await connection.send(RESPCommand("GET", "k0"), key: Array("k0".utf8))

        // When every slot moves to B and a batch reads k1 (inside the refresh interval: no read of the map)
        cluster.moveEverySlotToB()
        let replies = try await connection.send(batch: [(RESPCommand("GET", "k1"), Array("k1".utf8))])
        // Then the batch's command followed the MOVED straight to B, and the map names B for its slot
        #expect(try replies.map { try $0.get() } == [.bulkString(Array("b".utf8))])
        #expect(cluster.getsOnA("k1") == 1)
        #expect(connection.statistics.movedRedirects == 1)
        #expect(connection.statistics.topologyRefreshes == 1)
        #expect(connection.topology?.primary(for: HashSlot(key: Array("k1".utf8))) == cluster.addressB)
        // And the next command for that key goes straight to B
        #expect(
            try await connection.send(RESPCommand("GET", "k1"), key: Array("k1".utf8)) == .bulkString(Array("b".utf8)))
        #expect(cluster.getsOnA("k1") == 1)
        #expect(connection.statistics.movedRedirects == 1)
        await connection.close()
    }

    // MARK: - Support

    private func readAll(
        _ keys: [String], through connection: ClusterConnection, expecting value: String
    )
        async throws
    {
        try await withThrowingTaskGroup(of: RESPValue.self) { group in
            for key in keys {
                group.addTask { try await connection.send(RESPCommand("GET", key), key: Array(key.utf8)) }
            }
            for try await reply in group { #expect(reply == .bulkString(Array(value.utf8))) }
        }
    }
}

/// Two scripted cluster nodes on loopback. Both answer `CLUSTER SHARDS` with the current map (A serves every
/// slot until ``moveEverySlotToB()``); `GET` on A answers `a`, or `MOVED` to B once the slots moved; `GET` on B
/// answers `b`.
private final class TwoNodeCluster: Sendable {
    private let a: ScriptedServer
    private let b: ScriptedServer
    private let moved = Locked(false)
    private let down = Locked(false)
    private let slowReply = DispatchSemaphore(value: 0)

    init() throws {
        let ports = Locked((a: 0, b: 0))
        let moved = self.moved
        let down = self.down
        let slowReply = self.slowReply
        @Sendable func shards() -> String {
            let owner = moved.withLock { $0 } ? ports.withLock { $0.b } : ports.withLock { $0.a }
            return "*1\r\n%2\r\n$5\r\nslots\r\n*2\r\n:0\r\n:16383\r\n$5\r\nnodes\r\n*1\r\n%3\r\n"
                + "$4\r\nport\r\n:\(owner)\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
        }
        func node(
            isDown: @escaping @Sendable () -> Bool = { false }, _ get: @escaping @Sendable (String) -> String
        ) throws -> ScriptedServer {
            try ScriptedServer { command in
                // An empty reply makes the scripted server hang up.
                if isDown() { return "" }
                switch command.first?.uppercased() {
                case "HELLO": return "%2\r\n$4\r\nmode\r\n$7\r\ncluster\r\n$4\r\nrole\r\n$6\r\nmaster\r\n"
                case "CLUSTER": return shards()
                case "GET": return get(command.count > 1 ? command[1] : "")
                default: return "+OK\r\n"
                }
            }
        }
        let a = try node(isDown: { down.withLock { $0 } }) { key in
            // The held reply: this client's thread waits until the test releases it.
            if key == "slow" {
                slowReply.wait()
                return "$1\r\na\r\n"
            }
            guard moved.withLock({ $0 }) else { return "$1\r\na\r\n" }
            let slot = HashSlot(key: Array(key.utf8)).rawValue
            return "-MOVED \(slot) 127.0.0.1:\(ports.withLock { $0.b })\r\n"
        }
        let b = try node { _ in "$1\r\nb\r\n" }
        ports.withLock { $0 = (a.port, b.port) }
        self.a = a
        self.b = b
    }

    func moveEverySlotToB() { moved.withLock { $0 = true } }

    var addressA: RedisConnection.Address { .init(host: "127.0.0.1", port: a.port) }
    var addressB: RedisConnection.Address { .init(host: "127.0.0.1", port: b.port) }

    /// Returns once A has received a `GET` of `key` (its reply to `slow` is held until ``releaseSlowReply()``).
    func waitUntilAReceives(_ key: String) async {
        while !a.commands.contains(["GET", key]) { try? await Task.sleep(for: .milliseconds(5)) }
    }

    /// Client connections A has open.
    var clientsOfA: Int { a.openClients }

    /// How many `GET key` A has received.
    func getsOnA(_ key: String) -> Int { a.commands.filter { $0 == ["GET", key] }.count }

    /// Returns once A has no client connection open (it read each one's end of file), or `false` after a
    /// bound no healthy run comes near.
    func waitUntilAHasNoClient() async -> Bool { await a.waitUntilOpenClients(0) }

    /// Lets A answer the held `GET slow`.
    func releaseSlowReply() { slowReply.signal() }

    /// Makes A hang up on every command, its handshake included, as a node that died mid-connection.
    func stopA() { down.withLock { $0 = true } }

    /// A connection seeded with both nodes (A first), or with B alone, whose refresh interval is 10 s of
    /// `now`.
    func connection(now: Locked<ContinuousClock.Instant>, seedingA: Bool = true) -> ClusterConnection {
        var configuration = ClusterConnection.Configuration(
            seeds: seedingA ? [addressA, addressB] : [addressB],
            node: .init(
                connectTimeout: .seconds(5), readTimeout: .seconds(3_600), writeTimeout: .seconds(3_600),
                keepAliveInterval: .seconds(3_600)))
        configuration.operationTimeout = .seconds(3_600)
        configuration.minimumRefreshInterval = .seconds(10)
        configuration.now = { now.withLock { $0 } }
        return ClusterConnection(configuration: configuration)
    }
}

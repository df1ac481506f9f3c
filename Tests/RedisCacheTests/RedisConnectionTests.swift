import Foundation
import Testing

@testable import RedisConnection

/// Round trips and pipelining against a real `redis-server` child process.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisConnectionTests {
    @Test func roundTripsSetGetPxUnlinkIncrAndMget() async throws {
        let server = try RedisServer()
        let connection = try RedisTesting.connection(port: server.port)
        // Given a value set with a TTL of an hour (the server's TTL runs in real time: CI under ThreadSanitizer
        // once held this test for over a minute between its write and its read, past an earlier 60 s)
        #expect(try await connection.send(RESPCommand("SET", "k", "v\r\n1", "PX", "3600000")) == .simpleString("OK"))
        // Then it reads back byte for byte, with a TTL in (0, 3600000] ms
        #expect(try await connection.send(RESPCommand("GET", "k")) == RedisTesting.bulk("v\r\n1"))
        guard case .integer(let ttl) = try await connection.send(RESPCommand("PTTL", "k")) else {
            Issue.record("PTTL is not an integer")
            return
        }
        #expect(ttl > 0 && ttl <= 3_600_000)
        #expect(try await connection.send(RESPCommand("INCR", "n")) == .integer(1))
        #expect(try await connection.send(RESPCommand("INCR", "n")) == .integer(2))
        #expect(
            try await connection.send(RESPCommand("MGET", "k", "missing", "n"))
                == .array([RedisTesting.bulk("v\r\n1"), .null, RedisTesting.bulk("2")]))
        #expect(try await connection.send(RESPCommand("UNLINK", "k", "missing")) == .integer(1))
        #expect(try await connection.send(RESPCommand("GET", "k")) == .null)
        #expect(connection.statistics.connects == 1)
        await connection.close()
    }

    @Test func anErrorReplyIsThrownTypedAndTheConnectionStays() async throws {
        let server = try RedisServer()
        let connection = try RedisTesting.connection(port: server.port)
        _ = try await connection.send(RESPCommand("SET", "text", "x"))
        let error = await #expect(throws: ConnectionError.self) {
            try await connection.send(RESPCommand("INCR", "text"))
        }
        #expect(error?.code == .serverError)
        #expect(error?.message.hasPrefix("ERR") == true)
        #expect(try await connection.send(RESPCommand("PING")) == .simpleString("PONG"))
        await connection.close()
    }

    @Test(arguments: [true, false])
    func pipelinesAThousandConcurrentRequestsOverOneConnection(inline: Bool) async throws {
        let server = try RedisServer()
        var configuration = RedisConnection.Configuration(port: server.port, readTimeout: .seconds(10))
        // Inline exchanges on or off: with them on, only one task at a time borrows the idle connection, and
        // a second task sending makes the I/O thread batch again (the pool may run the tasks one after
        // another, which must not turn 1,000 tasks into 1,000 round trips).
        if !inline { configuration.inlineReplyWait = .zero }
        let connection = try RedisConnection(configuration: configuration)
        // When 1,000 tasks INCR one counter at once
        let replies = try await withThrowingTaskGroup(of: RESPValue.self) { group in
            for _ in 0..<1000 { group.addTask { try await connection.send(RESPCommand("INCR", "counter")) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        // Then every caller got its own reply: the values 1...1000, each once, on one connection
        let values = replies.compactMap { reply -> Int64? in
            if case .integer(let value) = reply { return value }
            return nil
        }
        #expect(values.sorted() == Array(1...1000))
        #expect(try await connection.send(RESPCommand("GET", "counter")) == RedisTesting.bulk("1000"))
        // And the requests went out in batches, not one send(2) each
        let statistics = connection.statistics
        #expect(statistics.connects == 1)
        #expect(statistics.writes < 1000)
        if !inline { #expect(statistics.inlineReplies == 0) }
        print("pipelining (inline \(inline)): 1,000 concurrent INCR written in \(statistics.writes) send(2) calls")
        await connection.close()
    }

    @Test func aFullServerRefusesAWriteAsOutOfMemory() async throws {
        let server = try RedisServer(extraArguments: ["--maxmemory", "1mb", "--maxmemory-policy", "noeviction"])
        let connection = try RedisTesting.connection(port: server.port)
        var value = RESPCommand("SET", "big")
        value.append([UInt8](repeating: 7, count: 2 << 20))
        _ = try? await connection.send(value)  // the first may fit below the limit
        let error = await #expect(throws: ConnectionError.self) {
            try await connection.send(value)
        }
        #expect(error?.code == .outOfMemory)
        await connection.close()
    }

    @Test func aReplicaIsRefusedAtTheHandshake() async throws {
        let primary = try RedisServer()
        let replica = try RedisServer(extraArguments: ["--replicaof", "127.0.0.1", String(primary.port)])
        let connection = try RedisTesting.connection(port: replica.port)
        let error = await #expect(throws: ConnectionError.self) {
            try await connection.send(RESPCommand("PING"))
        }
        #expect(error?.code == .replica)
        await connection.close()
    }

    @Test func aClusterNodeIsRefusedAtTheHandshake() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("strata-nodes-\(UUID()).conf")
        defer { try? FileManager.default.removeItem(at: file) }
        // The cluster bus needs a port too; its default (port + 10,000) may be taken or above 65,535.
        let busPort = String(try FreePort.find())
        let server = try RedisServer(extraArguments: [
            "--cluster-enabled", "yes", "--cluster-config-file", file.path, "--cluster-port", busPort,
        ])
        let connection = try RedisTesting.connection(port: server.port)
        let error = await #expect(throws: ConnectionError.self) {
            try await connection.send(RESPCommand("PING"))
        }
        #expect(error?.code == .clusterMode)
        await connection.close()
    }

    @Test func theCompletionHandlerVariantDeliversTheReply() async throws {
        let server = try RedisServer()
        let connection = try RedisTesting.connection(port: server.port)
        let reply = await withCheckedContinuation { continuation in
            connection.send(RESPCommand("ECHO", "hi")) { continuation.resume(returning: $0) }
        }
        #expect(try reply.get() == RedisTesting.bulk("hi"))
        await connection.close()
    }
}

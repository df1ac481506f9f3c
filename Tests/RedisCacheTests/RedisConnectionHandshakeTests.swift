import Foundation
import Testing

@testable import RedisConnection

/// Handshakes and replies a real Redis 7 does not give, against a scripted fake server on loopback.
@Suite struct RedisConnectionHandshakeTests {
    @Test func fallsBackToRESP2AndAuthWhenHelloIsUnknown() async throws {
        // Given a server from before RESP3 that wants a password
        let server = try ScriptedServer { command in
            switch command.first?.uppercased() {
            case "HELLO": return "-ERR unknown command 'HELLO'\r\n"
            case "AUTH": return command.last == "secret" ? "+OK\r\n" : "-WRONGPASS invalid password\r\n"
            case "CLIENT": return "+OK\r\n"
            case "ROLE": return "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n"
            default: return "+PONG\r\n"
            }
        }
        var configuration = RedisConnection.Configuration(port: server.port, password: "secret")
        configuration.readTimeout = .seconds(2)
        // No keep-alive PING among the commands: CI under ThreadSanitizer once left this test's task unscheduled
        // for over a minute between its request and the check below, and the idle connection pinged.
        configuration.keepAliveInterval = .seconds(3600)
        let connection = try RedisConnection(configuration: configuration)
        // When a request is sent, then the handshake went HELLO, AUTH, CLIENT SETNAME, ROLE, then the request
        #expect(try await connection.send(RESPCommand("PING")) == .simpleString("PONG"))
        #expect(server.commands.map { $0.first ?? "" } == ["HELLO", "AUTH", "CLIENT", "ROLE", "PING"])
        #expect(server.commands[1] == ["AUTH", "secret"])
        await connection.close()
    }

    @Test func aWrongPasswordIsAnAuthenticationFailure() async throws {
        let server = try ScriptedServer { _ in "-WRONGPASS invalid username-password pair or user is disabled.\r\n" }
        var configuration = RedisConnection.Configuration(port: server.port, password: "wrong")
        configuration.readTimeout = .seconds(2)
        configuration.keepAliveInterval = .seconds(60)
        let connection = try RedisConnection(configuration: configuration)
        let error = await #expect(throws: ConnectionError.self) { try await connection.send(RESPCommand("PING")) }
        #expect(error?.code == .authenticationFailed)
        await connection.close()
    }

    @Test(arguments: [
        ("-MOVED 3999 127.0.0.1:6381\r\n", ConnectionError.Code.moved),
        ("-ASK 3999 127.0.0.1:6381\r\n", .ask),
        ("-CROSSSLOT Keys in request don't hash to the same slot\r\n", .crossSlot),
        ("-READONLY You can't write against a read only replica.\r\n", .readOnly),
        ("-LOADING Redis is loading the dataset in memory\r\n", .loading),
        ("-OOM command not allowed when used memory > 'maxmemory'.\r\n", .outOfMemory),
        ("!11\r\nERR blobbed\r\n", .serverError),
    ])
    func errorRepliesAreTypedAndKeepTheConnection(reply: String, code: ConnectionError.Code) async throws {
        let server = try ScriptedServer { command in
            switch command.first {
            case "HELLO": return "%2\r\n+mode\r\n+standalone\r\n+role\r\n+master\r\n"
            case "GET": return reply
            default: return "+PONG\r\n"
            }
        }
        let connection = try RedisTesting.connection(port: server.port)
        let error = await #expect(throws: ConnectionError.self) { try await connection.send(RESPCommand("GET", "k")) }
        #expect(error?.code == code)
        #expect(try await connection.send(RESPCommand("PING")) == .simpleString("PONG"))
        #expect(connection.statistics.connects == 1)
        await connection.close()
    }

    @Test func aMalformedReplyFailsThePendingRequestsAndTheNextOneReconnects() async throws {
        let server = try ScriptedServer { command in
            switch command.first {
            case "HELLO": return "%1\r\n+role\r\n+master\r\n"
            case "GET": return "$3\r\nabcXY"  // three bytes, then no CRLF
            default: return "+PONG\r\n"
            }
        }
        let connection = try RedisTesting.connection(port: server.port)
        let error = await #expect(throws: ConnectionError.self) { try await connection.send(RESPCommand("GET", "k")) }
        #expect(error?.code == .protocolViolation)
        #expect(try await connection.send(RESPCommand("PING")) == .simpleString("PONG"))
        #expect(connection.statistics.reconnects == 1)
        await connection.close()
    }

    @Test func anOversizedBulkIsRefusedBeforeItArrives() async throws {
        let server = try ScriptedServer { command in
            command.first == "HELLO" ? "%1\r\n+role\r\n+master\r\n" : "$999999999\r\n"
        }
        var configuration = RedisConnection.Configuration(port: server.port)
        configuration.readTimeout = .seconds(2)
        configuration.keepAliveInterval = .seconds(60)
        configuration.decoderLimits.maximumBulkLength = 1024
        let connection = try RedisConnection(configuration: configuration)
        let error = await #expect(throws: ConnectionError.self) { try await connection.send(RESPCommand("GET", "k")) }
        #expect(error?.code == .protocolViolation)
        await connection.close()
    }

    @Test func aLoadingServerIsATypedErrorAtTheHandshake() async throws {
        let server = try ScriptedServer { _ in "-LOADING Redis is loading the dataset in memory\r\n" }
        let connection = try RedisTesting.connection(port: server.port)
        let error = await #expect(throws: ConnectionError.self) { try await connection.send(RESPCommand("GET", "k")) }
        #expect(error?.code == .loading)
        await connection.close()
    }

    @Test func pushesGoToTheHandlerAndAreNotTakenForReplies() async throws {
        let server = try ScriptedServer { command in
            switch command.first {
            case "HELLO": return "%1\r\n+role\r\n+master\r\n"
            case "GET": return ">2\r\n+invalidate\r\n*1\r\n+k\r\n$1\r\nv\r\n"
            default: return "+PONG\r\n"
            }
        }
        let pushes = PushLog()
        var configuration = RedisConnection.Configuration(
            port: server.port, readTimeout: .seconds(2), keepAliveInterval: .seconds(60))
        configuration.pushHandler = { pushes.append($0) }
        let connection = try RedisConnection(configuration: configuration)
        #expect(try await connection.send(RESPCommand("GET", "k")) == RedisTesting.bulk("v"))
        #expect(pushes.values == [.push([.simpleString("invalidate"), .array([.simpleString("k")])])])
        await connection.close()
    }
}

private final class PushLog: @unchecked Sendable {
    // @unchecked Sendable is sound: `stored` is used only under `lock`.
    private let lock = NSLock()
    private var stored: [RESPValue] = []
    var values: [RESPValue] { lock.withLock { stored } }
    func append(_ value: RESPValue) { lock.withLock { stored.append(value) } }
}

import Foundation
import Testing

@testable import RedisConnection

/// The connection layer over TLS against a real `redis-server` with `--tls-port`, certificates made by the
/// test (``TestCertificates``): verification (another CA, a name mismatch, an expired certificate), the
/// wrong kind of server on either side, a handshake that stalls, mutual TLS, and a reconnect.
///
/// Every failure is checked for its typed code; tests that expect a failure use short deadlines, tests that
/// expect success loose ones.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisTLSTests {
    let certificates: TestCertificates

    init() throws {
        certificates = try TestCertificates()
    }

    /// A server with a TLS listener presenting `certificate` (the good one by default).
    private func server(expired: Bool = false, requiresClientCertificates: Bool = false) throws -> RedisServer {
        try RedisServer(
            tls: .init(
                certificate: expired ? certificates.expiredCertificate : certificates.serverCertificate,
                key: expired ? certificates.expiredKey : certificates.serverKey,
                certificateAuthority: certificates.certificateAuthority,
                requiresClientCertificates: requiresClientCertificates))
    }

    /// A connection to `port` with `options` (the test CA, verified, by default).
    private func connection(
        port: Int, host: String = "127.0.0.1", options: TLSOptions? = nil, connectTimeout: Duration = .seconds(5)
    ) throws -> RedisConnection {
        var configuration = RedisConnection.Configuration(
            host: host, port: port, connectTimeout: connectTimeout, readTimeout: .seconds(5),
            writeTimeout: .seconds(5), keepAliveInterval: .seconds(60))
        configuration.tls = try TLSContext(
            options ?? TLSOptions(certificateAuthorityFile: certificates.certificateAuthority))
        return try RedisConnection(configuration: configuration)
    }

    private func failure(of connection: RedisConnection) async -> ConnectionError? {
        await #expect(throws: ConnectionError.self) { try await connection.send(RESPCommand("PING")) }
    }

    // MARK: - Verified

    @Test(arguments: ["127.0.0.1", "localhost"])
    func aVerifiedServerAnswersOverTLS(host: String) async throws {
        // Given a server whose certificate names 127.0.0.1 and localhost, signed by the trusted CA
        let server = try server()
        let connection = try connection(port: server.tlsPort, host: host)
        // When a value is written and read over TLS
        _ = try await connection.send(RESPCommand("SET", "tls-key", "over tls"))
        // Then it reads back, and the server holds it (seen through its plaintext port)
        #expect(try await connection.send(RESPCommand("GET", "tls-key")) == RedisTesting.bulk("over tls"))
        let plain = try RedisTesting.connection(port: server.port)
        #expect(try await plain.send(RESPCommand("GET", "tls-key")) == RedisTesting.bulk("over tls"))
        // And many concurrent requests pipeline over the one session
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let value = String(repeating: "v\(index)", count: 300)  // several TLS records each
                    _ = try await connection.send(RESPCommand("SET", "k\(index)", value))
                    #expect(try await connection.send(RESPCommand("GET", "k\(index)")) == RedisTesting.bulk(value))
                }
            }
            try await group.waitForAll()
        }
        #expect(connection.statistics.connects == 1)
        await plain.close()
        await connection.close()
    }

    @Test func aCertificateFromAnotherCAIsRejected() async throws {
        let server = try server()
        let connection = try connection(
            port: server.tlsPort, options: TLSOptions(certificateAuthorityFile: certificates.otherCertificateAuthority))
        let error = await failure(of: connection)
        #expect(error?.code == .certificateRejected, "\(String(describing: error))")
        await connection.close()
    }

    @Test func aNameMismatchIsRejected() async throws {
        let server = try server()
        let connection = try connection(
            port: server.tlsPort,
            options: TLSOptions(
                certificateAuthorityFile: certificates.certificateAuthority, serverName: "redis.example.org"))
        let error = await failure(of: connection)
        #expect(error?.code == .certificateRejected)
        #expect(error?.message.contains("mismatch") == true, "\(String(describing: error))")
        await connection.close()
    }

    @Test func anExpiredCertificateIsRejected() async throws {
        let server = try server(expired: true)
        let connection = try connection(port: server.tlsPort)
        let error = await failure(of: connection)
        #expect(error?.code == .certificateRejected)
        #expect(error?.message.contains("expired") == true, "\(String(describing: error))")
        await connection.close()
    }

    @Test func skippingVerificationAcceptsAnExpiredCertificate() async throws {
        let server = try server(expired: true)
        let connection = try connection(port: server.tlsPort, options: TLSOptions(verifiesCertificate: false))
        #expect(try await connection.send(RESPCommand("PING")) == .simpleString("PONG"))
        await connection.close()
    }

    // MARK: - The wrong kind of server, a stalled handshake

    @Test func aPlaintextServerOnATLSConnectionIsATypedError() async throws {
        // Given TLS pointed at the plaintext port: Redis reads the ClientHello as an inline command and
        // either answers an error (not a TLS record) or waits for a newline that never comes
        let server = try server()
        let connection = try connection(port: server.port, connectTimeout: .milliseconds(500))
        let error = await failure(of: connection)
        #expect(error?.code == .tlsFailed || error?.code == .deadlineExceeded, "\(String(describing: error))")
        await connection.close()
    }

    @Test func aTLSServerOnAPlaintextConnectionIsATypedError() async throws {
        // Given plain TCP pointed at the TLS port: the server drops (or alerts) a HELLO that is not TLS
        let server = try server()
        let connection = try RedisTesting.connection(port: server.tlsPort)
        let error = await failure(of: connection)
        let code = try #require(error?.code)
        #expect(
            [.connectionClosed, .protocolViolation, .deadlineExceeded].contains(code), "\(String(describing: error))")
        await connection.close()
    }

    @Test func aHandshakeThatStallsMissesTheConnectDeadline() async throws {
        // Given a listener that accepts and never answers (a proxy swallowing the ClientHello)
        let server = try server()
        let proxy = try FaultProxy(upstreamPort: server.tlsPort)
        proxy.mode = .blackhole
        let connection = try connection(port: proxy.port, connectTimeout: .milliseconds(300))
        // When a request needs the connection, then the handshake fails by the connect deadline, no hang
        let error = await failure(of: connection)
        #expect(error?.code == .deadlineExceeded)
        #expect(error?.message.contains("TLS handshake") == true, "\(String(describing: error))")
        await connection.close()
        proxy.stop()
    }

    // MARK: - Mutual TLS

    @Test func mutualTLSAcceptsTheConfiguredClientCertificate() async throws {
        let server = try server(requiresClientCertificates: true)
        let connection = try connection(
            port: server.tlsPort,
            options: TLSOptions(
                certificateAuthorityFile: certificates.certificateAuthority,
                clientCertificateFile: certificates.clientCertificate, clientKeyFile: certificates.clientKey))
        #expect(try await connection.send(RESPCommand("PING")) == .simpleString("PONG"))
        await connection.close()
    }

    @Test func mutualTLSRefusesAClientWithoutACertificate() async throws {
        // With TLS 1.3 the client's handshake ends before the server judges it; the refusal then arrives as an
        // alert on the first read (the HELLO's reply): a failed TLS setup or a closed connection.
        let server = try server(requiresClientCertificates: true)
        let connection = try connection(port: server.tlsPort)
        let error = await failure(of: connection)
        let code = try #require(error?.code)
        #expect([.tlsFailed, .connectionClosed].contains(code), "\(String(describing: error))")
        await connection.close()
    }

    // MARK: - A lost session

    @Test func aRestartedServerIsReconnectedOverTLS() async throws {
        // Given a TLS connection in use
        let server = try server()
        let connection = try connection(port: server.tlsPort)
        #expect(try await connection.send(RESPCommand("PING")) == .simpleString("PONG"))
        // When the server dies and comes back on the same ports
        try server.restart()
        // Then the connection notices, reconnects with a fresh handshake and serves again
        let recovered = await RedisTesting.waitAsync(timeout: .seconds(60)) {
            (try? await connection.send(RESPCommand("PING"))) == .simpleString("PONG")
        }
        #expect(recovered)
        #expect(connection.statistics.reconnects >= 1)
        await connection.close()
    }
}

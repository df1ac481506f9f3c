import Foundation
import RedisCache
import StrataTestSupport
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
        certificates = try TestCertificates.shared()
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

    @Test func aCertificateNamingTheHostOnlyInItsSubjectIsRejected() async throws {
        // Given a certificate from the trusted CA whose only "localhost" is its subject's common name
        let server = try RedisServer(
            tls: .init(
                certificate: certificates.subjectOnlyCertificate, key: certificates.subjectOnlyKey,
                certificateAuthority: certificates.certificateAuthority))
        // When a connection to localhost checks it, then the name is not found: subject alternative names only
        let connection = try connection(port: server.tlsPort, host: "localhost")
        let error = await failure(of: connection)
        #expect(error?.code == .certificateRejected, "\(String(describing: error))")
        #expect(error?.message.contains("mismatch") == true, "\(String(describing: error))")
        await connection.close()
    }

    @Test(arguments: ["\0localhost", "redis.example.org\0localhost", "\0"])
    func aNameWithANulByteIsRefusedBeforeTheHandshake(name: String) async throws {
        // Given a name OpenSSL would cut at the NUL ("\0localhost" would reach it as "", which checks no name),
        // against a server whose certificate the CA signed for localhost and 127.0.0.1
        let server = try server()
        let connection = try connection(
            port: server.tlsPort,
            options: TLSOptions(certificateAuthorityFile: certificates.certificateAuthority, serverName: name))
        // Then the connection refuses it rather than connect unchecked
        let error = await failure(of: connection)
        #expect(error?.code == .tlsFailed, "\(String(describing: error))")
        #expect(error?.message.contains("NUL") == true, "\(String(describing: error))")
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

    @Test func aServerOfferingOnlyTLS11IsRefused() async throws {
        // Given a server that speaks TLS 1.1 only, with a cipher a TLS 1.1 client still accepts (RSA key
        // transport: no SHA-1 signature for OpenSSL's security level to refuse) and a certificate the CA signed
        let server = try RedisServer(
            extraArguments: ["--tls-protocols", "TLSv1.1", "--tls-ciphers", "AES128-SHA:@SECLEVEL=0"],
            tls: .init(
                certificate: certificates.rsaServerCertificate, key: certificates.rsaServerKey,
                certificateAuthority: certificates.certificateAuthority))
        // When a connection tries it, the handshake fails on the protocol version: TLS 1.2 is the minimum
        let connection = try connection(port: server.tlsPort)
        let error = await failure(of: connection)
        #expect(error?.code == .tlsFailed, "\(String(describing: error))")
        #expect(error?.message.contains("protocol") == true, "\(String(describing: error))")
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

    @Test func anEncryptedClientKeyIsRefusedWithoutAPrompt() throws {
        // Given a client key encrypted with a passphrase: OpenSSL's default would prompt and read standard input
        let options = TLSOptions(
            clientCertificateFile: certificates.clientCertificate, clientKeyFile: certificates.encryptedClientKey)
        // When the context loads it, then it is refused at once, naming the key and the rule
        let error = #expect(throws: ConnectionError.self) { try TLSContext(options) }
        #expect(error?.code == .tlsFailed)
        #expect(error?.message.contains("must be unencrypted PEM") == true, "\(String(describing: error))")
    }

    @Test func aClientKeyOfAnotherCertificateIsNamedAsAMismatch() throws {
        // Given the client certificate with the server's key (both valid PEM, not a pair)
        let options = TLSOptions(
            clientCertificateFile: certificates.clientCertificate, clientKeyFile: certificates.serverKey)
        // When the context loads them, then the message says they do not match, not that the format is wrong
        let error = #expect(throws: ConnectionError.self) { try TLSContext(options) }
        #expect(error?.code == .tlsFailed)
        #expect(
            error?.message == "the client key \(certificates.serverKey) does not match the client certificate",
            "\(String(describing: error))")
    }

    @Test func aCAFileThatIsAFIFOIsRefusedWithoutBlocking() throws {
        // Given a FIFO where the CA file should be (opening it for reading would wait for a writer forever)
        let folder = TemporaryFolder(label: "tls-fifo")
        let fifo = folder.path("ca.pem")
        #expect(mkfifo(fifo, 0o600) == 0)
        // When the context loads it, then it is refused as not a regular file
        let error = #expect(throws: ConnectionError.self) {
            try TLSContext(TLSOptions(certificateAuthorityFile: fifo))
        }
        #expect(error?.code == .tlsFailed)
        #expect(error?.message.contains("is not a regular file") == true, "\(String(describing: error))")
    }

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

/// What crosses the wire, and what reaches a server the tier does not trust.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisTLSWireTests {
    private static let password = "wire-test-password-3f9c"

    /// Adds an ACL user `strata` with ``password`` (the default user stays open for the harness).
    private func addUser(on server: RedisServer) async throws {
        let admin = try RedisTesting.connection(port: server.port)
        _ = try await admin.send(
            RESPCommand("ACL", "SETUSER", "strata", "on", ">\(Self.password)", "~*", "&*", "+@all"))
        await admin.close()
    }

    @Test(arguments: RedisEndpoint.Kind.allCases)
    func theWireCarriesNoPasswordOrKeyNameOverTLS(over kind: RedisEndpoint.Kind) async throws {
        // Given a tier that logs in as an ACL user, through a proxy that records every byte
        let endpoint = try RedisEndpoint(kind)
        try await addUser(on: endpoint.server)
        let proxy = try FaultProxy(upstreamPort: endpoint.port, records: true)
        var configuration = try RedisTier.configuration(port: endpoint.port, namespace: "wire-namespace")
        endpoint.configure(&configuration)
        configuration.port = proxy.port
        configuration.username = "strata"
        configuration.password = Self.password
        let cache = try RedisCache<String, Data>(configuration: configuration)
        // When it writes and reads
        try await cache.setValue(Data("value".utf8), forKey: "a-key", expiry: .hours(1))
        #expect(try await cache.value(forKey: "a-key") == Data("value".utf8))
        await cache.close()
        proxy.stop()
        // Then with TLS neither the password, the command names nor the key prefix is on the wire; in plain
        // TCP (the control: the search finds them when they are there) all three are
        let wire = proxy.recorded
        let found = [Self.password, "HELLO", "strata:v2:wire-namespace"].map { contains(wire, $0) }
        #expect(found == (kind == .tls ? [false, false, false] : [true, true, true]), "\(kind)")
        #expect(!wire.isEmpty)
    }

    @Test func aTierVerifiesUnlessItsOptOutIsSet() async throws {
        // Given a TLS server whose CA the tier is not told about (another CA file)
        let endpoint = try RedisEndpoint(.tls)
        let certificates = try TestCertificates.shared()
        var configuration = try RedisTier.configuration(port: endpoint.port)
        configuration.tls = RedisCacheConfiguration.TLS(
            certificateAuthorityFile: certificates.otherCertificateAuthority)
        // When the tier writes with its defaults, the certificate is rejected
        let verifying = try RedisCache<String, Data>(configuration: configuration)
        let error = await #expect(throws: CacheError.self) {
            try await verifying.setValue(Data("v".utf8), forKey: "k", expiry: .hours(1))
        }
        #expect((error?.cause as? RedisError)?.code == .certificateRejected, "\(String(describing: error))")
        await verifying.close()
        // And only the explicit opt-out connects anyway
        configuration.tls?.insecureSkipVerification = true
        let trusting = try RedisCache<String, Data>(configuration: configuration)
        try await trusting.setValue(Data("v".utf8), forKey: "k", expiry: .hours(1))
        #expect(try await trusting.value(forKey: "k") == Data("v".utf8))
        await trusting.close()
    }

    @Test func nothingReachesAServerWhoseCertificateIsRejected() async throws {
        // Given a TLS server the tier does not trust (the client trusts another CA), and a password set
        let certificates = try TestCertificates.shared()
        let server = try RedisServer(
            tls: .init(
                certificate: certificates.serverCertificate, key: certificates.serverKey,
                certificateAuthority: certificates.certificateAuthority))
        // An hour's keep-alive: the admin's own PING, sent after 30 idle seconds on a starved machine, was
        // once counted as the rejected client's
        let admin = try RedisTesting.connection(
            port: server.port, readTimeout: .seconds(60), keepAlive: .seconds(3_600))
        _ = try await admin.send(
            RESPCommand("ACL", "SETUSER", "strata", "on", ">\(Self.password)", "~*", "&*", "+@all"))
        // The counters start after the harness's own commands (its HELLO included)
        _ = try await admin.send(RESPCommand("CONFIG", "RESETSTAT"))
        var configuration = RedisConnection.Configuration(
            port: server.tlsPort, username: "strata", password: Self.password, connectTimeout: .seconds(5),
            readTimeout: .seconds(5), writeTimeout: .seconds(5), keepAliveInterval: .seconds(60))
        configuration.tls = try TLSContext(TLSOptions(certificateAuthorityFile: certificates.otherCertificateAuthority))
        let connection = try RedisConnection(configuration: configuration)
        // When it tries to connect
        let error = await #expect(throws: ConnectionError.self) { try await connection.send(RESPCommand("PING")) }
        #expect(error?.code == .certificateRejected)
        await connection.close()
        // Then the server never ran a command of it: no HELLO, no AUTH, no PING (only the harness's RESETSTAT)
        let stats = try #require(try await admin.send(RESPCommand("INFO", "commandstats")).string)
        #expect(stats.contains("cmdstat_config|resetstat:calls=1"))
        for command in ["hello", "auth", "ping"] { #expect(!stats.contains("cmdstat_\(command):"), "\(stats)") }
        await admin.close()
    }

    @Test func aPeerThatResetsMidReplyIsADroppedConnection() async throws {
        // Given a TLS connection through a proxy, with a value several records long on the server
        let endpoint = try RedisEndpoint(.tls)
        let proxy = try FaultProxy(upstreamPort: endpoint.port)
        var configuration = RedisConnection.Configuration(
            port: proxy.port, connectTimeout: .seconds(60), readTimeout: .seconds(3_600), writeTimeout: .seconds(3_600),
            keepAliveInterval: .seconds(3_600))
        // Deadlines of an hour: the cut is an event to notice, not a deadline to wait for (a stalled scheduler
        // let a short read deadline fire first in the plain-TCP twin of this test).
        configuration.tls = try TLSContext(
            TLSOptions(certificateAuthorityFile: try #require(endpoint.certificates).certificateAuthority))
        let connection = try RedisConnection(configuration: configuration)
        let value = String(repeating: "x", count: 100_000)
        _ = try await connection.send(RESPCommand("SET", "big", value))
        // When the proxy cuts the connection in the middle of the reply
        proxy.mode = .cut(afterServerBytes: 20_000)
        let error = await #expect(throws: ConnectionError.self) { try await connection.send(RESPCommand("GET", "big")) }
        // Then the request fails as a dropped connection, and the next ones reconnect and are served
        #expect(error?.code == .connectionClosed, "\(String(describing: error))")
        let recovered = await RedisTesting.waitAsync(timeout: .seconds(60)) {
            (try? await connection.send(RESPCommand("GET", "big"))) == RedisTesting.bulk(value)
        }
        #expect(recovered)
        #expect(connection.statistics.reconnects >= 1)
        await connection.close()
        proxy.stop()
        withExtendedLifetime(endpoint) {}
    }

    private func contains(_ haystack: [UInt8], _ needle: String) -> Bool {
        let needle = Array(needle.utf8)
        guard haystack.count >= needle.count else { return false }
        return (0...(haystack.count - needle.count)).contains {
            haystack[$0..<($0 + needle.count)].elementsEqual(needle)
        }
    }
}

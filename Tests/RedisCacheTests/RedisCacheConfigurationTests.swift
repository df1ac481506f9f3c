import Foundation
import RedisCache
import Testing

/// The URL initialiser and the namespace rule; no server needed.
@Suite struct RedisCacheConfigurationTests {
    @Test func aFullURLFillsEveryField() throws {
        let configuration = try RedisCacheConfiguration(url: "redis://ci:s%40cret@127.0.0.5:6380/builds.v2")
        #expect(configuration.host == "127.0.0.5")
        #expect(configuration.port == 6380)
        #expect(configuration.username == "ci")
        #expect(configuration.password == "s@cret")
        #expect(configuration.namespace == "builds.v2")
    }

    @Test func defaultsApplyToAShortURL() throws {
        let configuration = try RedisCacheConfiguration(url: "redis://localhost")
        #expect(configuration.host == "localhost")
        #expect(configuration.port == 6379)
        #expect(configuration.username == nil)
        #expect(configuration.password == nil)
        #expect(configuration.namespace == RedisCacheConfiguration.defaultNamespace)
        let passwordOnly = try RedisCacheConfiguration(url: "redis://:pw@localhost:7000/")
        #expect(passwordOnly.username == nil)
        #expect(passwordOnly.password == "pw")
        #expect(passwordOnly.tls == nil)
        #expect(passwordOnly.namespace == RedisCacheConfiguration.defaultNamespace)
        // One trailing slash after a namespace is allowed
        #expect(try RedisCacheConfiguration(url: "redis://localhost/jobs/").namespace == "jobs")
    }

    @Test func severalAddressesAreTheFirstAndItsFallbacks() throws {
        // A cluster named by three nodes, one of them an IPv6 literal and one without a port
        let configuration = try RedisCacheConfiguration(url: "redis://ci:pw@127.0.0.7:7000,[::1]:7001,localhost/jobs")
        #expect(configuration.host == "127.0.0.7")
        #expect(configuration.port == 7000)
        #expect(configuration.username == "ci")
        #expect(configuration.password == "pw")
        #expect(configuration.namespace == "jobs")
        #expect(
            configuration.fallbackAddresses == [.init(host: "::1", port: 7001), .init(host: "localhost", port: 6379)])
        #expect(try RedisCacheConfiguration(url: "redis://localhost").fallbackAddresses.isEmpty)
    }

    @Test(arguments: [
        "redis://a:1,b:99999/ns", "redis://a:1,/ns", "redis://a:1,b:x/ns", "redis://127.0.0.1:6451,ci:secret@b:6470/ns",
        // A port too long for an Int parses as none: refused, not read as 6379
        "redis://a:1,b:99999999999999999999/ns",
    ])
    func aMalformedExtraAddressIsAnInvalidArgument(url: String) {
        let error = #expect(throws: CacheError.self) { try RedisCacheConfiguration(url: url) }
        #expect(error?.code == .invalidArgument)
    }

    @Test func aPasswordWithAnEncodedCommaIsKept() throws {
        let configuration = try RedisCacheConfiguration(url: "redis://u:a%2Cb@h:6380/ns")
        #expect(configuration.password == "a,b")
        #expect(configuration.host == "h" && configuration.port == 6380 && configuration.fallbackAddresses.isEmpty)
    }

    @Test func anIPv6LiteralLosesItsBrackets() throws {
        // getaddrinfo takes "::1", not the URL's "[::1]" (Foundation on Linux keeps the brackets in `host`)
        let configuration = try RedisCacheConfiguration(url: "rediss://[::1]:6390/v6")
        #expect(configuration.host == "::1")
        #expect(configuration.port == 6390)
        #expect(configuration.namespace == "v6")
    }

    @Test func aRedissURLTurnsOnVerifiedTLS() throws {
        let configuration = try RedisCacheConfiguration(url: "rediss://app:pw@redis.example.com:6380/jobs")
        #expect(configuration.host == "redis.example.com")
        #expect(configuration.port == 6380)
        #expect(configuration.tls == RedisCacheConfiguration.TLS())
        #expect(configuration.tls?.insecureSkipVerification == false)
        #expect(configuration.tls?.certificateAuthorityFile == nil)
    }

    @Test func aClientCertificateWithoutItsKeyIsRefused() {
        var configuration = RedisCacheConfiguration(namespace: "n", masterKeySource: .masterKey(Data(count: 32)))
        configuration.tls = RedisCacheConfiguration.TLS(clientCertificateFile: "/tmp/client.pem")
        let error = #expect(throws: CacheError.self) { try RedisCache<String, Data>(configuration: configuration) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("clientKeyFile") == true)
    }

    @Test(arguments: ["\0localhost", "redis.example.org\0localhost"])
    func aServerNameOrHostWithANulByteIsRefused(name: String) {
        // OpenSSL would read "\0localhost" as "", which checks no name at all
        var configuration = RedisCacheConfiguration(namespace: "n", masterKeySource: .masterKey(Data(count: 32)))
        configuration.tls = RedisCacheConfiguration.TLS(serverName: name)
        let named = #expect(throws: CacheError.self) { try RedisCache<String, Data>(configuration: configuration) }
        #expect(named?.code == .invalidArgument)
        #expect(named?.message.contains("tls.serverName") == true, "\(String(describing: named))")
        configuration.tls = RedisCacheConfiguration.TLS()
        configuration.host = name
        let hosted = #expect(throws: CacheError.self) { try RedisCache<String, Data>(configuration: configuration) }
        #expect(hosted?.code == .invalidArgument)
        #expect(hosted?.message.contains("NUL") == true, "\(String(describing: hosted))")
    }

    @Test func aMissingCAFileIsRefusedWhenTheCacheIsCreated() {
        var configuration = RedisCacheConfiguration(namespace: "n", masterKeySource: .masterKey(Data(count: 32)))
        configuration.tls = RedisCacheConfiguration.TLS(certificateAuthorityFile: "/nonexistent/strata-ca.pem")
        let error = #expect(throws: CacheError.self) { try RedisCache<String, Data>(configuration: configuration) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("/nonexistent/strata-ca.pem") == true)
    }

    @Test(arguments: [
        "", "localhost:6379", "http://localhost/x", "rediss://", "redis://", "redis://:6379/x",
        "redis://host:0/x", "redis://host:70000/x", "redis://host:99999999999999999999999/x", "redis://host/a/b",
        "redis://host//", "redis://host/x?db=1", "redis://host/x#f",
        "redis://host/has space", "redis://host/" + String(repeating: "n", count: 65), "redis://host/ünï",
    ])
    func badURLsAreInvalidArguments(url: String) {
        let error = #expect(throws: CacheError.self) { try RedisCacheConfiguration(url: url) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("\n") == false)
    }

    /// Malformed URLs that carry the password `hun…ter2`: unencoded `#`, an unexpanded `$P` port, no host,
    /// a missing `@host` (the password lands in the port), a bad scheme, query, path and namespace. (A
    /// space or a stray `%` in the password parses on Linux and is used as given.)
    @Test(arguments: [
        "redis://u:hunter2@/x", "redis://u:hun#ter2@127.0.0.1:6379/ns", "redis://u:hunter2@127.0.0.1:6379/ns/b",
        "redis://u:hunter2@127.0.0.1:$P/ns", "redis://u:12345678/ns", "rediss://u:hunter2@127.0.0.1/ns/b",
        "http://u:hunter2@127.0.0.1/ns", "hunter2://127.0.0.1/ns", "redis://u:hunter2@127.0.0.1/ns?x=hunter2",
        "redis://u:hunter2@127.0.0.1/hunter2:x", "redis://u:hunter2@127.0.0.1:99999/ns",
    ])
    func aPasswordNeverAppearsInAnError(url: String) {
        let error = #expect(throws: CacheError.self) { try RedisCacheConfiguration(url: url) }
        #expect(error?.code == .invalidArgument)
        let message = error.map { "\($0)" } ?? ""
        for secret in ["hunter2", "hun", "ter2", "12345678"] {
            #expect(error?.message.contains(secret) == false, "\(url) -> \(message)")
            #expect(!message.contains(secret), "\(url) -> \(message)")
        }
    }

    @Test(arguments: [Duration.zero, .seconds(Int64.max), .seconds(101 * 365 * 86_400)])
    func anOutOfRangeMaximumTimeToLiveIsRefused(timeToLive: Duration) {
        var configuration = RedisCacheConfiguration(namespace: "n", masterKeySource: .masterKey(Data(count: 32)))
        configuration.maximumTimeToLive = timeToLive
        let error = #expect(throws: CacheError.self) { try RedisCache<String, Data>(configuration: configuration) }
        #expect(error?.code == .invalidArgument)
    }

    @Test(arguments: [Int.min, -1, 0, 1])
    func aTrackedKeyLimitBelowTwoIsRefused(limit: Int) {
        var configuration = RedisCacheConfiguration(namespace: "n", masterKeySource: .masterKey(Data(count: 32)))
        configuration.trackedKeyLimit = limit
        let error = #expect(throws: CacheError.self) { try RedisCache<String, Data>(configuration: configuration) }
        #expect(error?.code == .invalidArgument)
        #expect(error?.message.contains("trackedKeyLimit") == true)
    }

    @Test(arguments: ["", "a:b", "a b", "a/b", "é", String(repeating: "x", count: 65)])
    func aBadNamespaceIsRefusedWhenTheCacheIsCreated(namespace: String) {
        let configuration = RedisCacheConfiguration(namespace: namespace, masterKeySource: .masterKey(Data(count: 32)))
        let error = #expect(throws: CacheError.self) { try RedisCache<String, Data>(configuration: configuration) }
        #expect(error?.code == .invalidArgument)
    }

    /// The envelope's binding stores a namespace's length in one byte and stops the process past 255 bytes
    /// (RecordBinding); a namespace that long, from a configuration or a URL, is a typed error first.
    @Test(arguments: [String(repeating: "n", count: 256), String(repeating: "é", count: 128)])
    func aNamespaceTooLongForTheEnvelopeIsATypedError(namespace: String) {
        let configuration = RedisCacheConfiguration(namespace: namespace, masterKeySource: .masterKey(Data(count: 32)))
        let created = #expect(throws: CacheError.self) { try RedisCache<String, Data>(configuration: configuration) }
        #expect(created?.code == .invalidArgument)
        let parsed = #expect(throws: CacheError.self) {
            try RedisCacheConfiguration(url: "redis://127.0.0.1/" + namespace)
        }
        #expect(parsed?.code == .invalidArgument)
    }
}

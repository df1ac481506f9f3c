import Foundation
import StrataTestSupport
import Testing

/// `strata --redis rediss://…` against a real `redis-server` listening with TLS only, with the test CA
/// (``TestCertificates``): the CA file and client certificate from options and from environment variables,
/// a server the system's trust store does not know, mutual TLS, and every setting mistake as one line with
/// its exit status (Docs/CLI.md, "Sharing through Redis").
@Suite(
    .serialized, .enabled(if: CLIRedisServer.runs, "redis-server not found: CLI Redis tests skipped (CI fails instead)")
)
struct RedisTLSCommandTests {
    @Test func twoStoresShareAValueOverTLSWithTheCAFromAnOptionOrTheEnvironment() throws {
        let certificates = try TestCertificates.shared()
        let server = try CLIRedisServer(tls: certificates)
        let first = try StrataHarness()
        let second = try StrataHarness()
        let url = "rediss://127.0.0.1:\(server.port)/cli-tls"
        // Given a value set through the first store, with the CA given as an option
        let set = try first.run(["--redis", url, "--redis-ca-file", certificates.certificateAuthority, "set", "k", "v"])
        #expect(set.status == 0)
        #expect(set.errorText == "")
        // When the second store (its own folder, the same master key) reads it with the CA from the environment
        let got = try second.run(
            ["--redis", url, "get", "k"], key: first.key,
            extraEnvironment: ["STRATA_REDIS_CA_FILE": certificates.certificateAuthority])
        // Then the value came through Redis over TLS, without a warning
        #expect(got.status == 0)
        #expect(got.outputText == "v")
        #expect(got.errorText == "")
        // And stats reaches the server the same way
        let stats = try second.run(
            ["stats", "--redis", url, "--redis-ca-file", certificates.certificateAuthority], key: first.key)
        #expect(stats.outputText.contains("redis state                answering"), "\(stats.outputText)")
    }

    @Test func aServerTheSystemTrustStoreDoesNotKnowIsWarnedAboutAndTheLocalStoreServes() throws {
        let certificates = try TestCertificates.shared()
        let server = try CLIRedisServer(tls: certificates)
        let harness = try StrataHarness()
        let url = "rediss://127.0.0.1:\(server.port)/cli-tls"
        // No CA file: the test CA is in no system store, so the certificate is rejected before anything is sent
        let set = try harness.run(["--redis", url, "set", "k", "local"])
        #expect(set.status == 0)
        #expect(set.errorLines.count == 1)
        #expect(set.errorLines.first?.hasPrefix("strata: warning: Redis at 127.0.0.1:\(server.port) not used") == true)
        #expect(set.errorText.contains("certificate"), "\(set.errorText)")
        #expect(try harness.run(["get", "k"]).outputText == "local")
    }

    @Test func mutualTLSUsesTheClientCertificateAndKeyAndFailsWithoutThem() throws {
        let certificates = try TestCertificates.shared()
        let server = try CLIRedisServer(tls: certificates, requiresClientCertificates: true)
        let first = try StrataHarness()
        let second = try StrataHarness()
        let url = "rediss://127.0.0.1:\(server.port)/cli-mtls"
        let options = [
            "--redis", url, "--redis-ca-file", certificates.certificateAuthority, "--redis-client-cert",
            certificates.clientCertificate, "--redis-client-key", certificates.clientKey,
        ]
        // With the certificate and key (options for one store, variables for the other) the value is shared
        #expect(try first.run(options + ["set", "k", "mutual"]).errorText == "")
        let got = try second.run(
            ["--redis", url, "get", "k"], key: first.key,
            extraEnvironment: [
                "STRATA_REDIS_CA_FILE": certificates.certificateAuthority,
                "STRATA_REDIS_CLIENT_CERT": certificates.clientCertificate,
                "STRATA_REDIS_CLIENT_KEY": certificates.clientKey,
            ])
        #expect(got.outputText == "mutual")
        #expect(got.errorText == "")
        // Without them the server refuses the session: one warning, and the (empty) local store answers
        let refused = try second.run(
            ["--redis", url, "--redis-ca-file", certificates.certificateAuthority, "get", "other"], key: first.key)
        #expect(refused.status == 1)
        #expect(refused.errorLines.count == 1)
        #expect(refused.errorLines.first?.hasPrefix("strata: warning: Redis at 127.0.0.1:\(server.port)") == true)
    }
}

/// The TLS settings' mistakes, each refused before the store opens or anything is sent: no server needed.
@Suite struct RedisTLSSettingTests {
    /// (arguments, environment, exit status, start of the one error line).
    static let mistakes: [([String], [String: String], Int32, String)] = [
        (["--redis-ca-file", "/ca.pem", "get", "k"], [:], 2, "strata: option --redis-ca-file needs a Redis URL"),
        (
            ["--redis-connect-timeout", "1s", "get", "k"], [:], 2,
            "strata: option --redis-connect-timeout needs a Redis URL"
        ),
        (
            ["--redis", "redis://127.0.0.1:1/ns", "--redis-ca-file", "/ca.pem", "get", "k"], [:], 2,
            "strata: option --redis-ca-file applies to rediss:// URLs only"
        ),
        (
            ["--redis", "redis://127.0.0.1:1/ns", "get", "k"], ["STRATA_REDIS_CLIENT_KEY": "/k.pem"], 2,
            "strata: STRATA_REDIS_CLIENT_KEY applies to rediss:// URLs only"
        ),
        (
            ["--redis", "rediss://127.0.0.1:1/ns", "--redis-client-cert", "/c.pem", "get", "k"], [:], 2,
            "strata: option --redis-client-cert needs its partner"
        ),
        (
            ["--redis", "rediss://127.0.0.1:1/ns", "--redis-connect-timeout", "0", "get", "k"], [:], 2,
            "strata: option --redis-connect-timeout must be more than 0"
        ),
        (
            ["--redis", "rediss://127.0.0.1:1/ns", "get", "k"], ["STRATA_REDIS_CONNECT_TIMEOUT": "soon"], 2,
            "strata: STRATA_REDIS_CONNECT_TIMEOUT 'soon'"
        ),
        (["--redis-timeout", "2s", "get", "k"], [:], 2, "strata: option --redis-timeout needs a Redis URL"),
        (
            ["--redis", "redis://127.0.0.1:1/ns", "--redis-timeout", "0ms", "get", "k"], [:], 2,
            "strata: option --redis-timeout must be more than 0"
        ),
        (
            ["--redis", "redis://127.0.0.1:1/ns", "get", "k"], ["STRATA_REDIS_TIMEOUT": "-1s"], 2,
            "strata: STRATA_REDIS_TIMEOUT '-1s'"
        ),
        (
            ["--redis", "rediss://127.0.0.1:1/ns", "--redis-ca-file", "/nonexistent/ca.pem", "get", "k"], [:], 3,
            "strata: cannot read the Redis CA file /nonexistent/ca.pem (--redis-ca-file): No such file or directory"
        ),
    ]

    @Test(arguments: mistakes)
    func aMistakeIsOneLineWithItsExitStatus(
        arguments: [String], environment: [String: String], status: Int32, message: String
    ) throws {
        let harness = try StrataHarness()
        let result = try harness.run(arguments, extraEnvironment: environment)
        #expect(result.status == status)
        #expect(result.errorLines.first?.hasPrefix(message) == true, "\(result.errorText)")
        // Usage errors add the usage; every other failure is the one line
        #expect(result.errorLines.count == (status == 2 && message.contains("option") ? 3 : 1), "\(result.errorText)")
        #expect(result.outputText == "")
    }

    @Test func settingsWithoutAnyRedisURLComeOnlyFromTheEnvironmentAndAreIgnored() throws {
        let harness = try StrataHarness()
        // Even values that would be refused with a URL: a variable without one is not read at all
        let environment = ["STRATA_REDIS_CA_FILE": "/nonexistent/ca.pem", "STRATA_REDIS_CONNECT_TIMEOUT": "soon"]
        #expect(try harness.run(["set", "k", "v"], extraEnvironment: environment).status == 0)
        let got = try harness.run(["get", "k"], extraEnvironment: environment)
        #expect(got.outputText == "v")
        #expect(got.errorText == "")
    }

    @Test func aCAFileThatIsAFIFOIsOneLineNotAHang() throws {
        // Given a FIFO as the CA file: a blocking open would wait for a writer forever
        let harness = try StrataHarness()
        let fifo = harness.path("ca-fifo.pem")
        #expect(mkfifo(fifo, 0o600) == 0)
        // When a command uses it, then it ends at once with the one line of an unusable file
        let result = try harness.run(["--redis", "rediss://127.0.0.1:1/ns", "--redis-ca-file", fifo, "get", "k"])
        #expect(result.status == 3)
        #expect(result.errorLines.count == 1)
        #expect(
            result.errorLines.first
                == "strata: the Redis CA file \(fifo) (--redis-ca-file) is not a regular file", "\(result.errorText)")
    }

    @Test func aCAFileOpenSSLCannotUseFailsWithOneLineBeforeAnythingIsSent() throws {
        let harness = try StrataHarness()
        let notPEM = harness.path("not-a-certificate.pem")
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: notPEM))
        let result = try harness.run(["--redis", "rediss://127.0.0.1:1/ns", "--redis-ca-file", notPEM, "get", "k"])
        #expect(result.status == 3)
        #expect(result.errorLines.count == 1)
        #expect(
            result.errorLines.first?.hasPrefix("strata: cannot use the TLS settings: cannot load the CA file \(notPEM)")
                == true, "\(result.errorText)")
    }
}

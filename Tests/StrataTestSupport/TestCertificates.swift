import Foundation

/// Certificates for the TLS suites (RedisCacheTests, StrataCLITests), made by the `openssl` command into a
/// temporary folder removed with this value: a CA, a server certificate it signed for 127.0.0.1 and
/// localhost (and an RSA one, and one naming localhost in its subject only), a client certificate it signed, a second CA that signed nothing the server
/// uses, and a server certificate that expired in 2020.
///
/// EC P-256 keys but for the RSA server's. Tests use ``shared()``, one set per test process: nine `openssl` runs once, not per test
/// (dozens of tests starting at once on two loaded cores made per-test sets slow). Thread safety: immutable
/// after `init`; the files are only read.
public final class TestCertificates: Sendable {
    private let folder = TemporaryFolder(label: "tls")

    /// The test process's set, made on first use and removed when the process exits.
    public static func shared() throws -> TestCertificates { try sharedSet.get() }

    private static let sharedSet: Result<TestCertificates, any Error> = {
        let result = Result { try TestCertificates() }
        // A static is never deinitialized, so its folder would outlive the run without this.
        if case .success = result { atexit { TestCertificates.removeSharedFolder() } }
        return result
    }()

    private static func removeSharedFolder() {
        if case .success(let set) = sharedSet { try? FileManager.default.removeItem(at: set.folder.url) }
    }

    /// The CA that signed the server and client certificates (PEM).
    public var certificateAuthority: String { folder.path("ca.crt") }
    /// A CA that signed nothing the server uses.
    public var otherCertificateAuthority: String { folder.path("other-ca.crt") }
    /// The server's certificate, for 127.0.0.1 and localhost, and its key.
    public var serverCertificate: String { folder.path("server.crt") }
    public var serverKey: String { folder.path("server.key") }
    /// A certificate for the same names that expired on 2 January 2020, and its key.
    public var expiredCertificate: String { folder.path("expired.crt") }
    public var expiredKey: String { folder.path("expired.key") }
    /// An RSA certificate for the same names, signed by the CA, and its key: for a server that offers only
    /// TLS 1.1 with RSA key transport (no signature a modern client refuses), which only the client's
    /// TLS 1.2 minimum keeps out.
    public var rsaServerCertificate: String { folder.path("rsa-server.crt") }
    public var rsaServerKey: String { folder.path("rsa-server.key") }
    /// A certificate signed by the CA that names localhost only in its subject's common name, with no subject
    /// alternative names (which RFC 6125 says a client must not fall back from), and its key.
    public var subjectOnlyCertificate: String { folder.path("subject-only.crt") }
    public var subjectOnlyKey: String { folder.path("subject-only.key") }
    /// The client's certificate and key, for mutual TLS.
    public var clientCertificate: String { folder.path("client.crt") }
    public var clientKey: String { folder.path("client.key") }
    /// The client's key encrypted with the passphrase "x" (a key the tier must refuse, never prompt for).
    public var encryptedClientKey: String { folder.path("client-encrypted.key") }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Makes every certificate; throws when `openssl` is missing or fails.
    public init() throws {
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let names = ["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"]
        for (name, subject) in [("ca", "/CN=Strata Test CA"), ("other-ca", "/CN=Strata Other CA")] {
            try run(
                ["req", "-x509"] + key + [
                    "-keyout", folder.path("\(name).key"), "-out", folder.path("\(name).crt"), "-days", "3650",
                    "-subj", subject,
                ])
        }
        let signedByCA = ["-CA", certificateAuthority, "-CAkey", folder.path("ca.key"), "-days", "3650"]
        try run(
            ["req", "-x509"] + key + ["-keyout", serverKey, "-out", serverCertificate, "-subj", "/CN=localhost"]
                + names + signedByCA)
        try run(
            ["req", "-x509"] + key + [
                "-keyout", subjectOnlyKey, "-out", subjectOnlyCertificate, "-subj", "/CN=localhost",
            ] + signedByCA)
        try run(
            ["req", "-x509"] + key + ["-keyout", clientKey, "-out", clientCertificate, "-subj", "/CN=strata-client"]
                + signedByCA)
        try run(["pkey", "-in", clientKey, "-aes256", "-passout", "pass:x", "-out", encryptedClientKey])
        try run(
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", rsaServerKey, "-out", rsaServerCertificate]
                + ["-subj", "/CN=localhost"] + names + signedByCA)
        // `req` refuses dates in the past; `openssl ca` takes explicit ones, with a minimal database.
        let configuration = """
            [ca]
            default_ca = test
            [test]
            database = \(folder.path("index.txt"))
            new_certs_dir = \(folder.url.path)
            serial = \(folder.path("serial"))
            default_md = sha256
            policy = any
            copy_extensions = copy
            [any]
            commonName = supplied
            """
        try Data(configuration.utf8).write(to: URL(fileURLWithPath: folder.path("ca.cnf")))
        try Data().write(to: URL(fileURLWithPath: folder.path("index.txt")))
        try Data("01\n".utf8).write(to: URL(fileURLWithPath: folder.path("serial")))
        try run(
            ["req", "-new"] + key + [
                "-keyout", expiredKey, "-out", folder.path("expired.csr"), "-subj", "/CN=localhost",
            ]
                + names)
        try run([
            "ca", "-batch", "-config", folder.path("ca.cnf"), "-cert", certificateAuthority, "-keyfile",
            folder.path("ca.key"), "-in", folder.path("expired.csr"), "-out", expiredCertificate, "-startdate",
            "20200101000000Z", "-enddate", "20200102000000Z", "-notext",
        ])
    }

    private func run(_ arguments: [String]) throws {
        let process = try ChildProcess("openssl", arguments, standardError: .pipe, searchPath: true)
        // End of file on stderr: the child is exiting.
        let message = process.standardError?.readDataToEndOfFile() ?? Data()
        guard process.waitUntilExit() == .exited(0) else {
            throw Failure(
                description: "openssl \(arguments.first ?? "") failed: \(String(decoding: message, as: UTF8.self))")
        }
    }
}

import Foundation
import RedisCache
import StrataTestSupport

/// A server for suites that run over plain TCP and over TLS alike: the same test, parameterized by
/// ``Kind``, not a copy per transport.
///
/// With ``Kind/tls`` the server also listens with TLS (certificates made for the test, see
/// ``TestCertificates``) and ``configure(_:)`` points a configuration at that port with the test CA.
struct RedisEndpoint {
    /// How the tier reaches the server.
    enum Kind: String, CaseIterable, Sendable, CustomStringConvertible {
        case plain, tls
        var description: String { rawValue }
    }

    let server: RedisServer
    let certificates: TestCertificates?

    /// Starts a server for `kind`.
    init(_ kind: Kind) throws {
        switch kind {
        case .plain:
            certificates = nil
            server = try RedisServer()
        case .tls:
            let certificates = try TestCertificates.shared()
            self.certificates = certificates
            server = try RedisServer(
                tls: .init(
                    certificate: certificates.serverCertificate, key: certificates.serverKey,
                    certificateAuthority: certificates.certificateAuthority))
        }
    }

    /// The port the tier connects to.
    var port: Int { certificates == nil ? server.port : server.tlsPort }

    /// Points `configuration` at this endpoint (its port, and with TLS the test CA).
    func configure(_ configuration: inout RedisCacheConfiguration) {
        configuration.port = port
        if let certificates {
            configuration.tls = RedisCacheConfiguration.TLS(certificateAuthorityFile: certificates.certificateAuthority)
        }
    }
}

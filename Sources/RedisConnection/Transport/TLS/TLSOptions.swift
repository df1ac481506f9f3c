/// What a TLS connection trusts, which name it verifies, and which certificate it presents.
///
/// The transport's own copy of the tier's public `RedisCacheConfiguration.TLS`, so this module depends on
/// no tier. Thread safety: a plain value; `Sendable`.
package struct TLSOptions: Sendable, Equatable {
    /// A PEM file of the certificate authorities to trust; `nil` trusts the system's store.
    package var certificateAuthorityFile: String?
    /// The name to verify in the server's certificate and to send as SNI; `nil` uses the host connected to.
    package var serverName: String?
    /// A PEM file with the client certificate (and its chain) for mutual TLS, or `nil`.
    package var clientCertificateFile: String?
    /// A PEM file with the client certificate's private key (unencrypted), or `nil`.
    package var clientKeyFile: String?
    /// Whether the server's certificate and name are verified. `false` is for tests and labs only.
    package var verifiesCertificate: Bool

    /// Creates options; the defaults verify against the system's trust store and present no certificate.
    package init(
        certificateAuthorityFile: String? = nil, serverName: String? = nil, clientCertificateFile: String? = nil,
        clientKeyFile: String? = nil, verifiesCertificate: Bool = true
    ) {
        self.certificateAuthorityFile = certificateAuthorityFile
        self.serverName = serverName
        self.clientCertificateFile = clientCertificateFile
        self.clientKeyFile = clientKeyFile
        self.verifiesCertificate = verifiesCertificate
    }
}

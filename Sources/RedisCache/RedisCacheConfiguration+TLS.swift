import CacheCore
import RedisConnection

extension RedisCacheConfiguration {
    /// How the tier speaks TLS to the server: what it trusts, which name it checks, which certificate it
    /// presents.
    ///
    /// Set ``RedisCacheConfiguration/tls`` (or use a `rediss://` URL) to connect over TLS. The defaults
    /// verify the server's certificate against the system's trust store and check that it was issued for
    /// the host connected to, as every managed Redis or Valkey service expects:
    ///
    /// ```swift
    /// var configuration = try RedisCacheConfiguration(url: "rediss://cache:secret@redis.example.com:6380/builds")
    /// configuration.tls?.certificateAuthorityFile = "/etc/strata/redis-ca.pem"  // a private CA instead
    /// ```
    ///
    /// - **Protocol.** TLS 1.2 at least; TLS 1.3 is offered first.
    /// - **Verified.** The chain up to a trusted CA (``certificateAuthorityFile`` or the system's store),
    ///   the validity period, and the name: ``serverName`` or else the host, as a DNS name (with SNI) or an
    ///   IP address (without SNI, which carries names only), matched against the certificate's subject
    ///   alternative names only, never its common name (RFC 6125, section 6.4.4). A failure is
    ///   ``RedisError/Code/certificateRejected`` and nothing — no `HELLO`, no password — is sent.
    /// - **Mutual TLS.** ``clientCertificateFile`` and ``clientKeyFile`` together (PEM; the key unencrypted).
    /// - **Files** are read once, when the cache is created; a file that cannot be loaded fails
    ///   creating the `RedisCache` with `CacheError` `.invalidArgument`.
    ///
    /// Linux speaks TLS through the system OpenSSL's `libssl`; Apple platforms through Network.framework, where
    /// client certificates are not supported (creating the cache fails with `.invalidArgument`; Docs/RedisCache.md,
    /// "TLS on Apple platforms"). Elsewhere creating a cache with TLS fails with `.invalidArgument` rather than
    /// connect in plaintext. Thread safety: a plain value; `Sendable`.
    public struct TLS: Sendable, Equatable {
        /// A PEM file of the certificate authorities to trust instead of the system's trust store; `nil`
        /// (the default) trusts the system's store (OpenSSL's default paths, `/etc/ssl/certs` on Debian).
        public var certificateAuthorityFile: String?
        /// The name the server's certificate must carry (and the SNI sent), when it is not the host
        /// connected to: an address reached through a tunnel, or a fallback address. Default `nil`: the host.
        public var serverName: String?
        /// A PEM file with the client certificate (and any intermediate certificates) for servers that
        /// require one (`tls-auth-clients yes`), or `nil`. Needs ``clientKeyFile``. Not supported on Apple
        /// platforms (creating the cache fails with `.invalidArgument`).
        public var clientCertificateFile: String?
        /// A PEM file with the client certificate's private key, unencrypted, or `nil`. Needs
        /// ``clientCertificateFile``.
        public var clientKeyFile: String?
        /// Turns off every check of the server's certificate and name: the connection is encrypted but
        /// anyone between the tier and the server can read and change it. For tests and labs with
        /// throw-away certificates only, never for a server reached over a network. Default `false`.
        public var insecureSkipVerification: Bool

        /// Creates TLS settings; the defaults verify against the system's trust store.
        ///
        /// - Parameters:
        ///   - certificateAuthorityFile: A PEM file of trusted CAs, or `nil` for the system's store.
        ///   - serverName: The name to verify instead of the host, or `nil`.
        ///   - clientCertificateFile: The client certificate (PEM) for mutual TLS, or `nil`.
        ///   - clientKeyFile: Its private key (PEM, unencrypted), or `nil`.
        public init(
            certificateAuthorityFile: String? = nil, serverName: String? = nil, clientCertificateFile: String? = nil,
            clientKeyFile: String? = nil
        ) {
            self.certificateAuthorityFile = certificateAuthorityFile
            self.serverName = serverName
            self.clientCertificateFile = clientCertificateFile
            self.clientKeyFile = clientKeyFile
            self.insecureSkipVerification = false
        }

        /// Checks that the client certificate and key come together, no setting is empty and the server
        /// name holds no NUL byte.
        ///
        /// - Throws: `CacheError` `.invalidArgument` naming the setting.
        func validate() throws(CacheError) {
            guard (clientCertificateFile == nil) == (clientKeyFile == nil) else {
                throw CacheError(
                    .invalidArgument, "tls.clientCertificateFile and tls.clientKeyFile must be given together")
            }
            for (name, value) in [
                ("certificateAuthorityFile", certificateAuthorityFile), ("serverName", serverName),
                ("clientCertificateFile", clientCertificateFile), ("clientKeyFile", clientKeyFile),
            ] where value?.isEmpty == true {
                throw CacheError(.invalidArgument, "tls.\(name) must not be empty (nil for none)")
            }
            // OpenSSL reads the name as a C string, so "\0…" would check no name at all.
            if serverName?.utf8.contains(0) == true {
                throw CacheError(.invalidArgument, "tls.serverName must not contain a NUL byte")
            }
        }

        /// The connection layer's copy.
        var options: TLSOptions {
            TLSOptions(
                certificateAuthorityFile: certificateAuthorityFile, serverName: serverName,
                clientCertificateFile: clientCertificateFile, clientKeyFile: clientKeyFile,
                verifiesCertificate: !insecureSkipVerification)
        }
    }
}

extension RedisCache {
    /// Loads the TLS settings once for every connection of the tier, or `nil` without TLS.
    ///
    /// - Throws: `CacheError` `.invalidArgument` with OpenSSL's reason when a file cannot be loaded.
    static func tlsContext(_ tls: RedisCacheConfiguration.TLS?) throws(CacheError) -> TLSContext? {
        guard let tls else { return nil }
        do {
            return try TLSContext(tls.options)
        } catch {
            let error = RedisError(error)
            throw CacheError(.invalidArgument, "cannot use the TLS settings: \(error.message)", cause: error)
        }
    }
}

#if canImport(Network)
import CacheCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Network
import Security

#if canImport(Darwin)
import Darwin
#endif

/// The settings every TLS connection of one tier shares on Apple platforms: the trust anchors read from the CA
/// file (or the system's trust store), the name to verify, whether to verify at all — turned into
/// Network.framework TLS options for each connection.
///
/// Built when the tier is created, so an unreadable CA file fails there, not at the first request. Thread
/// safety: immutable after `init`; `Sendable`.
///
/// `@unchecked Sendable` is sound: every stored property is a `let` set in `init`; the certificates are
/// immutable Security objects (not declared `Sendable`), which Security allows to be read from any thread,
/// and are only read, as the anchors of a trust evaluation.
package final class TLSContext: @unchecked Sendable {
    /// The certificate authorities to trust instead of the system's store, or `nil` for the system's store.
    let anchors: [SecCertificate]?
    /// The name verified and sent as SNI instead of the host connected to.
    let serverName: String?
    /// Whether certificates and names are verified.
    let verifiesCertificate: Bool

    /// Reads `options` once for every connection of a tier.
    ///
    /// - Parameter options: Trust, name, client certificate.
    /// - Throws: ``ConnectionError`` `.tlsFailed` when the CA file cannot be read or holds no PEM certificate
    ///   Security accepts, and when a client certificate is configured: Security builds the identity mutual
    ///   TLS needs (`SecIdentity`) only from a PKCS#12 file or a keychain item, never from the PEM certificate
    ///   and key files these options name (Docs/RedisCache.md, "TLS on Apple platforms"). Reads the CA file
    ///   (blocking I/O).
    package init(_ options: TLSOptions) throws(ConnectionError) {
        if options.clientCertificateFile != nil || options.clientKeyFile != nil {
            throw ConnectionError(
                .tlsFailed,
                "client certificates (mutual TLS) are not supported on Apple platforms: Security makes a TLS "
                    + "identity only from a PKCS#12 file or a keychain item, not from PEM certificate and key files")
        }
        serverName = options.serverName
        verifiesCertificate = options.verifiesCertificate
        // Without verification the anchors would never be consulted; a CA file is still read, so a wrong path
        // fails when the cache is created whichever way the switch is set, as on Linux.
        anchors = try options.certificateAuthorityFile.map { file throws(ConnectionError) in
            try Self.certificates(inPEMFile: file)
        }
    }

    /// Does nothing: Network.framework keeps no per-thread state the connection thread must free.
    package static func releaseThreadState() {}

    /// The TLS options for one connection: TLS 1.2 at least (1.3 is offered first, Network.framework's
    /// default), SNI for a host name, and a verify block that evaluates the server's chain against this
    /// context's anchors and `name`, recording why it refused in `rejection`.
    ///
    /// - Parameters:
    ///   - name: The name to verify (``serverName`` or the host connected to).
    ///   - rejection: Where a rejection's reason is recorded, for the typed error.
    ///   - queue: The connection's queue, on which the verify block runs.
    func makeOptions(name: String, rejection: Locked<String?>, queue: DispatchQueue) -> NWProtocolTLS.Options {
        let options = NWProtocolTLS.Options()
        let security = options.securityProtocolOptions
        sec_protocol_options_set_min_tls_protocol_version(security, .TLSv12)
        // SNI carries host names only (RFC 6066, section 3).
        if !Self.isIPAddress(name) { sec_protocol_options_set_tls_server_name(security, name) }
        sec_protocol_options_set_verify_block(
            security,
            { [self] _, trust, complete in
                let reason = evaluate(sec_trust_copy_ref(trust).takeRetainedValue(), name: name)
                if let reason { rejection.withLock { $0 = reason } }
                complete(reason == nil)
            }, queue)
        return options
    }

    /// Evaluates the server's chain; `nil` when it is trusted (or verification is off), else the reason.
    ///
    /// The policy is Security's SSL server policy for `name`, which checks a DNS name against the
    /// certificate's DNS names and an IP address against its IP addresses; with a CA file its certificates are
    /// the only anchors (`SecTrustSetAnchorCertificatesOnly`), as OpenSSL trusts only the given file on Linux.
    private func evaluate(_ trust: SecTrust, name: String) -> String? {
        guard verifiesCertificate else { return nil }
        guard SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, name as CFString)) == errSecSuccess else {
            return "cannot set the TLS server policy for \(name)"
        }
        if let anchors {
            guard SecTrustSetAnchorCertificates(trust, anchors as CFArray) == errSecSuccess,
                SecTrustSetAnchorCertificatesOnly(trust, true) == errSecSuccess
            else { return "cannot set the CA file's certificates as the only anchors" }
        }
        var error: CFError?
        if SecTrustEvaluateWithError(trust, &error) { return nil }
        return error.map { ($0 as any Error).localizedDescription } ?? "the certificate chain is not trusted"
    }

    /// The certificates of a PEM file, each `-----BEGIN CERTIFICATE-----` block decoded (RFC 7468).
    private static func certificates(inPEMFile file: String) throws(ConnectionError) -> [SecCertificate] {
        guard let data = FileManager.default.contents(atPath: file) else {
            throw ConnectionError(.tlsFailed, "cannot load the CA file \(file): it cannot be read")
        }
        let text = String(decoding: data, as: UTF8.self)
        var certificates: [SecCertificate] = []
        let begin = "-----BEGIN CERTIFICATE-----"
        let end = "-----END CERTIFICATE-----"
        var rest = text[...]
        while let start = rest.range(of: begin), let stop = rest[start.upperBound...].range(of: end) {
            let body = rest[start.upperBound..<stop.lowerBound]
            guard let der = Data(base64Encoded: String(body), options: .ignoreUnknownCharacters),
                let certificate = SecCertificateCreateWithData(nil, der as CFData)
            else {
                throw ConnectionError(
                    .tlsFailed, "cannot load the CA file \(file): certificate \(certificates.count + 1) is not valid")
            }
            certificates.append(certificate)
            rest = rest[stop.upperBound...]
        }
        guard !certificates.isEmpty else {
            throw ConnectionError(.tlsFailed, "cannot load the CA file \(file): it holds no PEM certificate")
        }
        return certificates
    }

    private static func isIPAddress(_ name: String) -> Bool {
        var scratch = in6_addr()
        return inet_pton(AF_INET, name, &scratch) == 1 || inet_pton(AF_INET6, name, &scratch) == 1
    }
}
#endif  // canImport(Network): Network.framework on Apple platforms

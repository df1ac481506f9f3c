import CacheCore
import CacheCrypto

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

extension RedisCacheConfiguration {
    /// The namespace a URL without a path gets.
    public static let defaultNamespace = "default"

    /// Creates a configuration from a `redis://[user:password@]host[:port][,host[:port]…][/namespace]` URL, or a
    /// `rediss://` one for TLS.
    ///
    /// Several addresses (comma-separated) name nodes of one server or Redis Cluster: the first is used first, the
    /// others become ``fallbackAddresses``; on a cluster each is a seed the slot map can be read from, so the tier
    /// starts while one of them is down. Any one node of a cluster is enough: the tier finds the rest.
    ///
    /// `rediss://` sets ``tls`` to ``TLS``'s defaults: the server's certificate is verified against the
    /// system's trust store and the host name. The port defaults to 6379 and the namespace to ``defaultNamespace``. User and password are
    /// percent-decoded; a password without a user (`redis://:secret@host`) authenticates as `default`.
    /// Everything else keeps its default and can be changed afterwards.
    ///
    /// ```swift
    /// let configuration = try RedisCacheConfiguration(url: "redis://ci:secret@10.0.0.5:6379/builds")
    /// ```
    ///
    /// - Parameters:
    ///   - url: The URL.
    ///   - masterKeySource: Where the master key comes from.
    /// - Throws: `CacheError` `.invalidArgument` with a one-line reason: not a URL, a scheme other than
    ///   `redis` or `rediss`, no host, a port outside 1...65535, an extra address that is not `host[:port]` (a
    ///   `,` before the `@`: write a password's comma as `%2C`), a query or fragment, a path of more than one component, or a namespace outside `[A-Za-z0-9._-]{1,64}`.
    public init(url: String, masterKeySource: MasterKeySource = .platformDefault) throws(CacheError) {
        let (url, seeds) = try Self.splittingSeeds(url)
        guard let components = URLComponents(string: url), components.scheme != nil else {
            // The URL is never echoed: it may hold a password, and a URL that does not parse cannot be
            // redacted reliably (an unencoded `#` in the password ends the authority early).
            throw CacheError(
                .invalidArgument,
                "the Redis URL does not parse (an unencoded #, space or % in the password, or an unset variable?); "
                    + "expected redis://[user:password@]host[:port][/namespace]")
        }
        let scheme = components.scheme?.lowercased()
        guard scheme == "redis" || scheme == "rediss" else {
            // The scheme is not named: a mangled URL can put the user or password there.
            throw CacheError(.invalidArgument, "unsupported scheme in a Redis URL; expected redis:// or rediss://")
        }
        guard var host = components.host, !host.isEmpty else {
            throw CacheError(.invalidArgument, "the Redis URL has no host")
        }
        // An IPv6 literal is bracketed in a URL (RFC 3986 §3.2.2) but not for getaddrinfo; Foundation on Linux
        // keeps the brackets in `host`
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let port = components.port ?? 6379
        // A port the parser cannot represent (more digits than an Int holds) comes back as no port at all.
        guard (1...65_535).contains(port), components.port != nil || Self.portText(of: url).isEmpty else {
            // The value is not shown: a URL missing its `@host` can put the password in the port.
            throw CacheError(.invalidArgument, "the Redis URL's port must be between 1 and 65535")
        }
        guard components.query == nil, components.fragment == nil else {
            throw CacheError(.invalidArgument, "a Redis URL takes no query or fragment")
        }
        var path = components.path
        if path.hasPrefix("/") { path.removeFirst() }
        // One trailing slash is allowed ("/ns/"); a bare "//" is refused as a namespace of "/", not read as none.
        if path.hasSuffix("/"), path.count > 1 { path.removeLast() }
        let namespace = path.isEmpty ? Self.defaultNamespace : path
        do {
            try Self.validateNamespace(namespace)
        } catch {
            // Not echoed either: a mangled URL can carry the password into the path.
            throw CacheError(
                .invalidArgument, "the Redis URL's namespace must be 1 to 64 characters from A-Z a-z 0-9 . _ -")
        }
        let user = components.user.flatMap { $0.isEmpty ? nil : $0 }
        self.init(
            host: host, port: port, username: user, password: components.password, namespace: namespace,
            masterKeySource: masterKeySource)
        if scheme == "rediss" { tls = TLS() }
        fallbackAddresses = seeds
    }

    /// The text after the port's `:` in `url`'s (single-address) authority, empty when it names no port.
    private static func portText(of url: String) -> Substring {
        guard let schemeEnd = url.firstRange(of: "://") else { return "" }
        let authority = url[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        var host = authority[(authority.lastIndex(of: "@").map(authority.index(after:)) ?? authority.startIndex)...]
        if host.hasPrefix("["), let close = host.firstIndex(of: "]") { host = host[host.index(after: close)...] }
        guard let colon = host.lastIndex(of: ":") else { return "" }
        return host[host.index(after: colon)...]
    }

    /// `url` with only its first address, and the addresses after it: `redis://host1:6379,host2:6380/ns` names
    /// several nodes of one server or cluster (the first used first, the rest as ``fallbackAddresses``; on a
    /// cluster every one is a seed to read the slot map from).
    private static func splittingSeeds(_ url: String) throws(CacheError) -> (String, [Address]) {
        guard let schemeEnd = url.firstRange(of: "://") else { return (url, []) }
        let rest = url[schemeEnd.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        // The user information ends at the last `@` (a password may hold an encoded one only, but be lenient).
        let hostsStart = authority.lastIndex(of: "@").map(authority.index(after:)) ?? authority.startIndex
        // A `,` before it is ambiguous: an address list whose later address carries credentials
        // (`h1:6379,u:p@h2`) reads as user `h1` with password `6379,u:p`, which would send the wrong credentials
        // to the wrong host. Refused; a password's own comma is written %2C.
        if authority[..<hostsStart].contains(",") {
            throw CacheError(
                .invalidArgument,
                "a Redis URL's extra address carries credentials, or its password has an unencoded ','; put "
                    + "user:password@ before the first address, and write ',' in a password as %2C")
        }
        let hosts = authority[hostsStart...].split(separator: ",", omittingEmptySubsequences: false)
        guard hosts.count > 1 else { return (url, []) }
        var seeds: [Address] = []
        for host in hosts.dropFirst() {
            guard let parsed = URLComponents(string: "redis://\(host)"), var name = parsed.host, !name.isEmpty else {
                throw CacheError(.invalidArgument, "a Redis URL's extra address is not host[:port]")
            }
            if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
            let port = parsed.port ?? 6379
            // As for the first address: a port too long for an Int parses as no port, not as 6379.
            guard (1...65_535).contains(port), parsed.port != nil || Self.portText(of: "redis://\(host)").isEmpty,
                parsed.path.isEmpty, parsed.user == nil
            else {
                throw CacheError(
                    .invalidArgument, "a Redis URL's extra address is not host[:port] with a port between 1 and 65535")
            }
            seeds.append(Address(host: name, port: port))
        }
        // Substrings share the URL's indices: everything before the first address, it, and the path on.
        return (String(url[..<hostsStart]) + hosts[0] + url[authority.endIndex...], seeds)
    }
}

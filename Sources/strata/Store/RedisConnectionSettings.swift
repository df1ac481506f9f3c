import RedisCache

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How `strata` connects to Redis beyond the URL: the TLS files of a `rediss://` server (a private CA, a
/// client certificate and key for mutual TLS), the connect deadline and the per-request deadline, each from its
/// option or else its environment variable (Docs/CLI.md, "Sharing through Redis").
///
/// Rules, checked before the store opens so that a mistake changes nothing:
/// - An option needs a Redis URL (`--redis` or `STRATA_REDIS_URL`); without one it is a usage error (2). An
///   environment variable without a URL is ignored, so a shell profile may export them for the runs that
///   use Redis.
/// - A TLS setting with a plaintext `redis://` URL is refused (2), from an option or a variable alike:
///   the user asked for a verified connection and would otherwise silently get a plaintext one.
/// - The client certificate and key come together (2).
/// - Every TLS file is opened for reading here; one that cannot be read is a one-line failure (3), as an
///   unreadable key file is. A file OpenSSL cannot use (not PEM, a key that does not match) fails when the
///   tier is created, also with 3 (``SharedTier/init(configuration:)``).
struct RedisConnectionSettings {
    /// One TLS file or value and where it came from, for messages.
    struct Setting<Value> {
        var value: Value
        /// `--redis-ca-file` or `STRATA_REDIS_CA_FILE`.
        var source: String
        /// Whether it came from the command line (an option) rather than the environment.
        var isOption: Bool
    }

    /// The TLS files by what they are: (option name, environment variable, what the file holds).
    private static let files = [
        ("redis-ca-file", "STRATA_REDIS_CA_FILE", "CA file"),
        ("redis-client-cert", "STRATA_REDIS_CLIENT_CERT", "client certificate"),
        ("redis-client-key", "STRATA_REDIS_CLIENT_KEY", "client key"),
    ]

    /// The CA file, client certificate and client key, in ``files``' order; `nil` where not given.
    private var tlsFiles: [Setting<String>?]
    /// The deadlines by what they bound: (option name, environment variable, how it sets the configuration).
    private static let deadlines: [(String, String, @Sendable (inout RedisCacheConfiguration, Duration) -> Void)] = [
        ("redis-connect-timeout", "STRATA_REDIS_CONNECT_TIMEOUT", { $0.connectTimeout = $1 }),
        // A server across a slow link needs more than the library's cache-grade 50 ms reply deadline.
        ("redis-timeout", "STRATA_REDIS_TIMEOUT", { $0.setRequestDeadline($1) }),
    ]

    /// The deadlines in seconds from their options, in ``deadlines``' order; `nil` where not given.
    private var deadlineOptions: [Setting<TimeInterval>?]
    /// The deadlines' environment variables' texts where their options are absent: parsed only when there is
    /// a Redis URL, since a variable without one is ignored, whatever it holds.
    private var deadlineVariables: [String?]

    /// Collects the settings from `globals` (options win) and `environment`; an empty variable counts as unset.
    ///
    init(globals: GlobalOptions, environment: [String: String]) {
        tlsFiles = Self.files.map { option, variable, _ in
            if let value = globals.redisFiles[option] {
                return Setting(value: value, source: "--\(option)", isOption: true)
            }
            guard let value = environment[variable], !value.isEmpty else { return nil }
            return Setting(value: value, source: variable, isOption: false)
        }
        deadlineOptions = Self.deadlines.map { option, _, _ in
            globals.redisDeadlines[option].map { Setting(value: $0, source: "--\(option)", isOption: true) }
        }
        deadlineVariables = Self.deadlines.map { option, variable, _ in
            guard globals.redisDeadlines[option] == nil, let text = environment[variable], !text.isEmpty else {
                return nil
            }
            return text
        }
    }

    /// Applies the settings to the tier's configuration (`nil`: no Redis URL was given).
    ///
    /// - Throws: `CLIFailure.usage` or `.badSetting` (2) for a setting that does not fit the URL, a timeout
    ///   that is zero or not a duration, or a client certificate without its key; `.store` (3) for a TLS file
    ///   that cannot be read or is not a regular file.
    func apply(to configuration: inout RedisCacheConfiguration?) throws(CLIFailure) {
        guard var updated = configuration else {
            let options =
                tlsFiles.compactMap { $0 }.filter(\.isOption).map(\.source)
                + deadlineOptions.compactMap { $0 }.map(\.source)
            if let option = options.first {
                throw .usage("option \(option) needs a Redis URL (--redis or STRATA_REDIS_URL)", command: nil)
            }
            return
        }
        for (index, (_, variable, set)) in Self.deadlines.enumerated() {
            var deadline = deadlineOptions[index]
            if deadline == nil, let text = deadlineVariables[index] {
                do {
                    deadline = Setting(value: try Units.duration(text), source: variable, isOption: false)
                } catch {
                    throw .badSetting("\(variable) '\(text)' \(error.reason)")
                }
            }
            guard let deadline else { continue }
            guard deadline.value > 0 else { throw Self.mistake(deadline, "must be more than 0") }
            set(&updated, .milliseconds(Int64((deadline.value * 1000).rounded(.up))))
        }
        let present = tlsFiles.compactMap { $0 }
        if updated.tls == nil, let first = present.first {
            throw Self.mistake(
                first,
                "applies to rediss:// URLs only, and the Redis URL is redis:// (plaintext); use rediss:// for TLS")
        }
        let (authority, certificate, key) = (tlsFiles[0], tlsFiles[1], tlsFiles[2])
        if let lone = certificate ?? key, (certificate == nil) != (key == nil) {
            throw Self.mistake(lone, "needs its partner: the client certificate and key go together")
        }
        for (index, setting) in tlsFiles.enumerated() {
            guard let setting else { continue }
            try Self.checkReadable(setting, holding: Self.files[index].2)
        }
        updated.tls?.certificateAuthorityFile = authority?.value
        updated.tls?.clientCertificateFile = certificate?.value
        updated.tls?.clientKeyFile = key?.value
        configuration = updated
    }

    /// A usage error for an option, a bad setting for a variable; both exit 2.
    private static func mistake<Value>(_ setting: Setting<Value>, _ reason: String) -> CLIFailure {
        setting.isOption
            ? .usage("option \(setting.source) \(reason)", command: nil) : .badSetting("\(setting.source) \(reason)")
    }

    /// Opens `setting`'s file for reading, checks that it is a regular file, and closes it again.
    ///
    /// Non-blocking, so a FIFO given as a file cannot hang the tool in `open(2)`; anything but a regular
    /// file (a FIFO, a directory, a device) is refused before OpenSSL would read it.
    ///
    /// - Throws: `CLIFailure.store` (3) naming the file, where it was given, and the system's reason.
    private static func checkReadable(_ setting: Setting<String>, holding what: String) throws(CLIFailure) {
        let path = EntryFormatting.outsideText(setting.value)
        let descriptor = open(setting.value, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw .store("cannot read the Redis \(what) \(path) (\(setting.source)): \(reason)")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw .store("the Redis \(what) \(path) (\(setting.source)) is not a regular file")
        }
    }
}

extension RedisCacheConfiguration {
    /// `--redis-timeout`: one deadline for each request's write and its reply.
    fileprivate mutating func setRequestDeadline(_ deadline: Duration) {
        readTimeout = deadline
        writeTimeout = deadline
    }
}

import Foundation
import StrataTestSupport
import Testing

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// A write to the pipe of a server's watcher that already exited must fail with `EPIPE`, not end the test
/// process with `SIGPIPE` (at file scope: inside `RedisServer`, `signal` names its method).
private let ignoringBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

/// A `redis-server` child process on a free loopback port, for tests that need a real server they can
/// kill (`SIGKILL`), pause (`SIGSTOP`/`SIGCONT`), restart and stop, always by pid.
///
/// Started as `redis-server --port P --bind 127.0.0.1 --save '' --appendonly no`: nothing is written to
/// disk and only loopback is used. Where `redis-server` is missing the Redis suites skip with one line,
/// except in CI (`CI` or `STRATA_CI` set), where they fail.
final class RedisServer: @unchecked Sendable {
    // @unchecked Sendable is sound: `process` is replaced only under `lock`, and every use reads it there;
    // `port` is written only during `init`.

    /// The `redis-server` executable, if one is installed.
    static let executable: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { "\($0)/redis-server" } + ["/usr/bin/redis-server"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Whether tests must run (and fail) without a server: CI never skips.
    static let isCI: Bool = {
        let environment = ProcessInfo.processInfo.environment
        return environment["CI"] != nil || environment["STRATA_CI"] != nil
    }()

    /// Whether the Redis suites run here: a server is installed, or CI demands the run (and its failure).
    static let suitesRun = executable != nil || isCI

    /// The one line a skipped suite prints.
    static let skipNote: Comment =
        "redis-server not found: Redis suites skipped (install redis-server; CI fails instead)"

    /// The loopback port the server listens on.
    private(set) var port = 0
    /// The loopback port of its TLS listener, beside the plaintext one; 0 without ``TLSSetup``.
    private(set) var tlsPort = 0
    /// More options for the port the server is started on (a cluster node names its config file by port).
    private let extraArguments: @Sendable (_ port: Int) throws -> [String]
    private let tls: TLSSetup?

    /// What a server with a TLS listener presents and trusts (`--tls-port`, `--tls-cert-file`, …).
    struct TLSSetup: Sendable {
        /// The server's certificate and key (PEM).
        var certificate: String
        var key: String
        /// The CA that client certificates must chain to.
        var certificateAuthority: String
        /// `--tls-auth-clients yes`: a client without a certificate from that CA is refused.
        var requiresClientCertificates = false
    }
    private let lock = NSLock()
    private var process: ChildProcess?
    /// The write end of the pipe the server's watcher reads (see ``start()``).
    private var guardPipe: FileHandle?

    struct Missing: Error, CustomStringConvertible {
        var description: String { "redis-server is not installed (required in CI)" }
    }

    /// Starts a server and waits until it accepts connections.
    ///
    /// - Parameters:
    ///   - extraArguments: More `redis-server` options, such as `--maxmemory 1mb`.
    ///   - tls: A TLS listener on ``tlsPort`` as well, or `nil`. The plaintext port stays open either way:
    ///     the harness checks the server through it, and tests inspect the server there.
    convenience init(extraArguments: [String] = [], tls: TLSSetup? = nil) throws {
        try self.init(tls: tls) { _ in extraArguments }
    }

    /// Starts a server whose extra options depend on the port it was given, and waits until it accepts
    /// connections.
    ///
    /// - Parameters:
    ///   - tls: A TLS listener as well, or `nil`.
    ///   - argumentsForPort: More `redis-server` options for a port; called again when a port is retried.
    init(tls: TLSSetup? = nil, argumentsForPort: @escaping @Sendable (_ port: Int) throws -> [String]) throws {
        guard Self.executable != nil else { throw Missing() }
        self.extraArguments = argumentsForPort
        self.tls = tls
        // A port found free can be taken before the server binds it; then the server exits and another
        // port is tried.
        var failure: any Error = Missing()
        for _ in 0..<3 {
            port = try FreePort.find()
            if tls != nil { tlsPort = try FreePort.find() }
            do {
                try start()
                return
            } catch {
                failure = error
                kill9()
            }
        }
        throw failure
    }

    deinit {
        stop()
    }

    /// The pid of the running server, or 0.
    var pid: Int32 { lock.withLock { process?.pid ?? 0 } }

    /// Starts (again) on the same port and waits until it accepts connections (at most 10 s).
    ///
    /// The server is started through `sh`, which leaves a watcher reading a pipe whose write end only this
    /// process holds and then `exec`s the server (so the pid is the server's). If this process dies without
    /// stopping the server (a crash, `SIGKILL`), the pipe closes and the watcher kills the server, so no
    /// `redis-server` outlives the test run; ``kill9()`` first tells the watcher to exit without killing.
    func start() throws {
        _ = ignoringBrokenPipes
        let arguments =
            [
                "-c", Self.watchedStart, "sh", Self.executable ?? "/usr/bin/redis-server",
                "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", NSTemporaryDirectory(), "--logfile", "",
            ] + tlsArguments + (try extraArguments(port))
        // Standard input is the guard pipe; only its write end (close-on-exec, so no other child holds it)
        // stays open here: the watcher must see end-of-file when this process dies.
        let process = try ChildProcess("/bin/sh", arguments, standardInput: .pipe)
        lock.withLock {
            self.process = process
            self.guardPipe = process.standardInput
        }
        try waitUntilAccepting()
    }

    /// The TLS options of ``start()``: a TLS listener on ``tlsPort`` (a server that cannot bind it exits,
    /// and ``init(extraArguments:tls:)`` tries other ports).
    private var tlsArguments: [String] {
        guard let tls else { return [] }
        return [
            "--tls-port", String(tlsPort), "--tls-cert-file", tls.certificate, "--tls-key-file", tls.key,
            "--tls-ca-cert-file", tls.certificateAuthority, "--tls-auth-clients",
            tls.requiresClientCertificates ? "yes" : "no",
        ]
    }

    /// The `sh -c` script of ``start()``: keeps the guard pipe on descriptor 3 for a background watcher that
    /// kills `$$` (the server, once `exec`ed) at end-of-file, and exits quietly when it reads a line.
    private static let watchedStart = """
        exec 3<&0 </dev/null
        ( read -r word <&3 || kill -9 $$ ) &
        exec 3<&-
        exec "$@"
        """

    /// Sends `signal` to the server process.
    func signal(_ signal: Int32) {
        let pid = pid
        if pid > 0 { _ = kill(pid, signal) }
    }

    /// Kills the server with `SIGKILL` and reaps it.
    func kill9() {
        let (process, guardPipe) = lock.withLock { (self.process, self.guardPipe) }
        // The watcher exits on this line, before the pid it would kill can be freed and reused.
        try? guardPipe?.write(contentsOf: Data("stop\n".utf8))
        try? guardPipe?.close()
        signal(SIGKILL)
        // SIGKILL cannot be caught, so polling `isRunning` (which reaps the child) for a bounded time is enough.
        let deadline = ContinuousClock.now + .seconds(10)
        while process?.isRunning == true && ContinuousClock.now < deadline { usleep(1_000) }
        lock.withLock {
            self.process = nil
            self.guardPipe = nil
        }
    }

    /// Stops the server (`SIGCONT` in case it was paused, then `SIGKILL`; nothing is persisted anyway).
    func stop() {
        signal(SIGCONT)
        kill9()
    }

    /// Restarts after a kill: the same port, an empty data set.
    func restart() throws {
        kill9()
        try start()
    }

    /// Polls `connect(2)` to the port every 5 ms until it succeeds; the wait for a child process to come
    /// up cannot be driven by a test clock.
    func waitUntilAccepting(timeout: Duration = .seconds(10)) throws {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            // Accepting is not enough: a fault proxy of another test may have bound the port between its
            // discovery and this server's bind (the server then exits); the server must name its own pid.
            if FreePort.accepts(port) {
                let expected = lock.withLock { process?.pid }
                if let expected, FreePort.redisProcessID(port: port) == expected { return }
            }
            if lock.withLock({ process?.isRunning }) != true { break }  // it exited: the port was taken
            usleep(5_000)
        }
        throw CocoaError(
            .fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "redis-server did not start on \(port)"])
    }
}

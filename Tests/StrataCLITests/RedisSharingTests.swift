import Foundation
import StrataTestSupport
import Testing

/// `strata --redis URL`: two stores on one Redis server share `exec` results and `set` values; a dead
/// server costs one warning line; a bad URL is a one-line usage failure.
@Suite(
    .serialized, .enabled(if: CLIRedisServer.runs, "redis-server not found: CLI Redis tests skipped (CI fails instead)")
)
struct RedisSharingTests {
    @Test func twoStoresShareAnExecResultAndAValueThroughOneServer() throws {
        let server = try CLIRedisServer()
        let first = try StrataHarness()
        let second = try StrataHarness()
        let url = "redis://127.0.0.1:\(server.port)/cli-share"
        let marker = first.path("marker")
        let command = ["exec", "--ttl", "10m", "--", "sh", "-c", "echo run >> \"$0\"; echo shared-output", marker]
        // Both run in one folder (the working directory is part of an exec key), each with its own store
        // and the same master key
        let run = { (harness: StrataHarness, arguments: [String]) throws -> StrataResult in
            try RunningStrata(
                arguments: ["--store", harness.store.path, "--redis", url] + arguments, stdin: nil,
                environment: harness.environment(key: first.key, extra: [:]), directory: first.root
            ).wait()
        }
        let ran = try run(first, command)
        #expect(ran.status == 0)
        #expect(ran.outputText == "shared-output\n")
        #expect(ran.errorText == "")
        let replayed = try run(second, command)
        #expect(replayed.status == 0)
        #expect(replayed.outputText == "shared-output\n")
        #expect(replayed.errorText == "")
        #expect(first.lineCount("marker") == 1)
        // And a value set on one store is read on the other, then kept there
        #expect(try run(first, ["set", "greeting", "hello"]).status == 0)
        #expect(try run(second, ["get", "greeting"]).outputText == "hello")
        server.stop()
        // With Redis gone the local copy serves, after one warning line
        let local = try run(second, ["get", "greeting"])
        #expect(local.outputText == "hello")
        #expect(local.errorLines.count == 1)
        #expect(local.errorLines.first?.hasPrefix("strata: warning: Redis at 127.0.0.1:\(server.port)") == true)
    }

    @Test func aKeyOverRedisKeyLimitLivesInItsOwnStoreAndIsReadBack() throws {
        // Given a key of 64 KiB + 1 bytes, past what the Redis tier holds
        let server = try CLIRedisServer()
        let harness = try StrataHarness()
        let url = "redis://127.0.0.1:\(server.port)/cli-long-key"
        let key = String(repeating: "q", count: (64 << 10) + 1)
        let run = { (arguments: [String]) throws -> StrataResult in try harness.run(["--redis", url] + arguments) }

        // When it is set and read back through Redis, then a command line that long is run twice
        #expect(try run(["set", key, "v"]).status == 0)
        let read = try run(["get", key])
        let marker = harness.path("marker")
        let long = String(repeating: "x", count: 66_000)
        let command = ["exec", "--ttl", "10m", "--", "sh", "-c", "echo run >> \"$0\"; echo out # \(long)", marker]
        let runs = try (0..<2).map { _ in try run(command) }

        // Then the value is read from the store that wrote it (Redis, which never had it, is not asked), and
        // the command ran once and was replayed
        #expect(read.status == 0 && read.outputText == "v", "\(read.errorText)")
        #expect(runs.map(\.outputText) == ["out\n", "out\n"])
        #expect(harness.lineCount("marker") == 1)
    }

    @Test func aBreakerOpenedByMissedDeadlinesIsNamedWithItsCause() throws {
        // Given an exec whose command runs while the server is frozen, with the library's short deadlines
        let server = try CLIRedisServer()
        let harness = try StrataHarness()
        let url = "redis://127.0.0.1:\(server.port)/cli-breaker"
        let started = harness.path("started")
        let running = try harness.start(
            ["--redis", url, "exec", "--ttl", "10m", "--", "sh", "-c", "touch \"$0\"; sleep 2; echo done", started],
            extraEnvironment: ["STRATA_REDIS_TIMEOUT": "50ms"])
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: started), Date() < deadline { usleep(10_000) }
        server.pause()
        defer { server.resume() }
        let result = try #require(try running.wait(timeout: 60))

        // Then the command's result is kept locally with one warning; when that warning says the breaker is
        // open, it also says why (the user can act on missed deadlines, not on a breaker)
        #expect(result.status == 0 && result.outputText == "done\n")
        let warnings = result.errorText.split(separator: "\n")
        #expect(warnings.count == 1 && warnings[0].contains("not used for the rest of this run"), "\(warnings)")
        #expect(
            !result.errorText.contains("(circuit breaker open)")
                || result.errorText.contains("(circuit breaker open); it opened after"), "\(result.errorText)")
    }

    @Test func whileRedisAnswersItDecidesWhatEveryStoreReads() throws {
        let server = try CLIRedisServer()
        let first = try StrataHarness()
        let second = try StrataHarness()
        let url = "redis://127.0.0.1:\(server.port)/cli-coherence"
        let run = { (harness: StrataHarness, arguments: [String], stdin: Data?) throws -> StrataResult in
            try RunningStrata(
                arguments: ["--store", harness.store.path, "--redis", url] + arguments, stdin: stdin,
                environment: harness.environment(key: first.key, extra: [:]), directory: first.root
            ).wait()
        }
        // Given a value the second store has read (and so holds locally)
        #expect(try run(first, ["set", "k", "one"], nil).status == 0)
        #expect(try run(second, ["get", "k"], nil).outputText == "one")
        // When the first store replaces it, the second reads the new value, not its local copy
        #expect(try run(first, ["set", "k", "two"], nil).status == 0)
        let replaced = try run(second, ["get", "k"], nil)
        #expect(replaced.outputText == "two")
        #expect(replaced.errorText == "")
        // When the first store removes it, the second misses
        #expect(try run(first, ["rm", "k"], nil).status == 0)
        let removed = try run(second, ["get", "k"], nil)
        #expect(removed.status == 1)
        #expect(removed.outputText == "")
        // When the first store clears, every key the second had read misses there too
        #expect(try run(first, ["set", "a", "1"], nil).status == 0)
        #expect(try run(second, ["get", "a"], nil).outputText == "1")
        #expect(try run(first, ["clear"], nil).status == 0)
        #expect(try run(second, ["get", "a"], nil).status == 1)
        // And a value over the tier's 1 MiB maximum, which only the local store can hold, is still served
        let large = Data(repeating: 0x78, count: (1 << 20) + 1)
        #expect(try run(second, ["set", "large"], large).status == 0)
        let served = try run(second, ["get", "large"], nil)
        #expect(served.status == 0)
        #expect(served.outputText.utf8.count == large.count)
        #expect(served.errorText == "")
    }

    @Test func aHitOfACurrentLocalCopyWritesNothingToTheStore() throws {
        let server = try CLIRedisServer()
        let first = try StrataHarness()
        let second = try StrataHarness()
        let url = "redis://127.0.0.1:\(server.port)/cli-current"
        let run = { (harness: StrataHarness, arguments: [String]) throws -> StrataResult in
            try RunningStrata(
                arguments: ["--store", harness.store.path, "--redis", url] + arguments, stdin: nil,
                environment: harness.environment(key: first.key, extra: [:]), directory: first.root
            ).wait()
        }
        let insertions = { (harness: StrataHarness) throws -> Int? in
            let stats = try run(harness, ["stats", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(stats.outputText.utf8)) as? [String: Any]
            return object?["insertions"] as? Int
        }
        // Given a value set through the first store (so both it and Redis hold it)
        #expect(try run(first, ["set", "k", "v"]).status == 0)
        let firstBefore = try insertions(first)
        // When the first store reads it twice, and the second store (which lacks it) reads it twice
        for _ in 0..<2 { #expect(try run(first, ["get", "k"]).outputText == "v") }
        for _ in 0..<2 { #expect(try run(second, ["get", "k"]).outputText == "v") }
        // Then the first store wrote nothing, and the second wrote its copy once
        #expect(try insertions(first) == firstBefore)
        #expect(try insertions(second) == 1)
        // And with nothing missed by Redis, no journal of pending writes was made beside either store
        for harness in [first, second] {
            let journal = harness.store.appendingPathComponent("pending-writes").path
            #expect(!FileManager.default.fileExists(atPath: journal))
        }
    }

    @Test func aSetDuringAnOutageIsReplayedOnceRedisAnswersAgain() throws {
        let server = try CLIRedisServer()
        let first = try StrataHarness()
        let second = try StrataHarness()
        let url = "redis://127.0.0.1:\(server.port)/cli-outage"
        let run = { (harness: StrataHarness, arguments: [String]) throws -> StrataResult in
            try RunningStrata(
                arguments: ["--store", harness.store.path, "--redis", url] + arguments, stdin: nil,
                environment: harness.environment(key: first.key, extra: [:]), directory: first.root
            ).wait()
        }
        let pending = { (harness: StrataHarness) throws -> Int? in
            let stats = try run(harness, ["stats", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(stats.outputText.utf8)) as? [String: Any]
            return (object?["redis"] as? [String: Any])?["pendingWrites"] as? Int
        }
        // Given a value both stores read through Redis
        #expect(try run(first, ["set", "k", "before"]).status == 0)
        #expect(try run(second, ["get", "k"]).outputText == "before")
        // When the first store writes while Redis does not answer
        server.pause()
        let offline = try RunningStrata(
            arguments: ["--store", first.store.path, "--redis", url, "set", "k", "during"], stdin: nil,
            environment: first.environment(key: first.key, extra: ["STRATA_REDIS_TIMEOUT": "50ms"]),
            directory: first.root
        ).wait()
        #expect(offline.status == 0)
        #expect(offline.errorLines.count == 1)
        #expect(try pending(first) == 1)
        // And Redis answers again
        server.resume()
        // Then the write is replayed by the first store's next run, and both stores read it
        #expect(try run(first, ["get", "k"]).outputText == "during")
        #expect(try pending(first) == 0)
        #expect(try run(second, ["get", "k"]).outputText == "during")
    }

    @Test func aDamagedJournalOfPendingWritesCostsOneWarning() throws {
        let server = try CLIRedisServer()
        let harness = try StrataHarness()
        let url = "redis://127.0.0.1:\(server.port)/cli-journal"
        let run = { (arguments: [String], timeout: String) throws -> StrataResult in
            try RunningStrata(
                arguments: ["--store", harness.store.path, "--redis", url] + arguments, stdin: nil,
                environment: harness.environment(key: harness.key, extra: ["STRATA_REDIS_TIMEOUT": timeout]),
                directory: harness.root
            ).wait()
        }
        // Given a write Redis missed, kept in the journal beside the store
        server.pause()
        #expect(try run(["set", "k", "during"], "50ms").status == 0)
        server.resume()
        // When the journal's database and its WAL are overwritten with bytes that are not SQLite's
        let folder = harness.store.appendingPathComponent("pending-writes")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.contains(".sqlite") }
        #expect(files.count == 3)
        for name in files {
            try Data(repeating: 0x5A, count: 8_192).write(to: folder.appendingPathComponent(name))
        }
        // Then the next run says the pending write is lost, once, and goes on
        let get = try run(["get", "k"], "5s")
        #expect(get.errorLines.count == 1)
        let warning = get.errorLines.first ?? ""
        #expect(warning.hasPrefix("strata: warning: the journal of writes Redis missed was damaged"), "\(warning)")
    }

    @Test func aDeadServerCostsOneWarningAndTheLocalStoreKeepsWorking() throws {
        let server = try CLIRedisServer()
        let port = server.port
        server.stop()
        let harness = try StrataHarness()
        let url = "redis://127.0.0.1:\(port)/cli-dead"
        let set = try harness.run(["--redis", url, "set", "k", "v"])
        #expect(set.status == 0)
        #expect(set.errorLines.count == 1)
        #expect(set.errorLines.first?.hasPrefix("strata: warning: Redis at 127.0.0.1:\(port)") == true)
        // The address once, and the reason in words
        let warning = set.errorLines.first ?? ""
        #expect(warning.components(separatedBy: "127.0.0.1:\(port)").count == 2, "\(warning)")
        #expect(warning.contains("Connection refused (errno"), "\(warning)")
        let get = try harness.run(["get", "k"], extraEnvironment: ["STRATA_REDIS_URL": url])
        #expect(get.status == 0)
        #expect(get.outputText == "v")
        let miss = try harness.run(["--redis", url, "get", "absent"])
        #expect(miss.status == 1)
        #expect(miss.errorLines.count == 1)
    }

    // The 256-byte namespace is one the envelope's binding could not hold (RecordBinding stops the process).
    @Test(arguments: [
        "http://127.0.0.1/x", "redis://127.0.0.1:99999/x", "redis://127.0.0.1/a:b", "nonsense",
        "redis://127.0.0.1/" + String(repeating: "n", count: 256),
    ])
    func aBadURLIsOneLineAndExitTwo(url: String) throws {
        let harness = try StrataHarness()
        let result = try harness.run(["--redis", url, "get", "k"])
        #expect(result.status == 2)
        #expect(result.errorLines.count == 1)
        #expect(result.errorLines.first?.hasPrefix("strata: bad Redis URL: ") == true)
        let fromEnvironment = try harness.run(["get", "k"], extraEnvironment: ["STRATA_REDIS_URL": url])
        #expect(fromEnvironment.status == 2)
    }

    @Test(arguments: [
        "redis://u:hun#ter2@127.0.0.1:6379/ns", "redis://u:hunter2@127.0.0.1:99999/ns",
        "redis://u:hunter2@127.0.0.1:$P/ns", "redis://u:hunter2@/ns",
    ])
    func aBadURLNeverShowsItsPassword(url: String) throws {
        let harness = try StrataHarness()
        for result in [
            try harness.run(["--redis", url, "get", "k"]),
            try harness.run(["get", "k"], extraEnvironment: ["STRATA_REDIS_URL": url]),
        ] {
            #expect(result.status == 2)
            #expect(result.errorLines.first?.hasPrefix("strata: bad Redis URL: ") == true)
            let everything = result.errorLines.joined(separator: "\n") + result.outputText
            #expect(!everything.contains("hun"), "\(everything)")
            #expect(!everything.contains("ter2"), "\(everything)")
        }
    }
}

/// A `redis-server` child on a free loopback port for the CLI tests, stopped by pid; with TLS it listens on
/// that port with TLS only (`--port 0 --tls-port`), presenting the test CA's server certificate.
final class CLIRedisServer: Sendable {
    static let executable = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }
    static let runs =
        executable != nil || ProcessInfo.processInfo.environment["STRATA_CI"] != nil
        || ProcessInfo.processInfo.environment["CI"] != nil

    let port: Int
    private let process: ChildProcess

    /// Starts the server.
    ///
    /// - Parameters:
    ///   - tls: The certificates to serve TLS with (server certificate, CA for client certificates), or `nil`
    ///     for plain TCP.
    ///   - requiresClientCertificates: With TLS, refuse clients without a certificate from the test CA.
    ///   - extraArguments: More `redis-server` arguments (a cluster node's, for example).
    init(
        tls: TestCertificates? = nil, requiresClientCertificates: Bool = false, extraArguments: [String] = []
    ) throws {
        guard let executable = Self.executable else { throw CocoaError(.fileNoSuchFile) }
        let listener: (Int) -> [String] = { port in
            guard let tls else { return ["--port", String(port)] }
            return [
                "--port", "0", "--tls-port", String(port), "--tls-cert-file", tls.serverCertificate, "--tls-key-file",
                tls.serverKey, "--tls-ca-cert-file", tls.certificateAuthority, "--tls-auth-clients",
                requiresClientCertificates ? "yes" : "no",
            ]
        }
        var lastError: (any Error)?
        for _ in 0..<5 {
            // Never a port another test of this process had (a finished test's client may still reconnect
            // to it) nor one a running server holds (then this one would exit and the wait below could
            // mistake the other server for it).
            let port = try LoopbackPorts.unclaimed()
            let process = try ChildProcess(
                executable,
                listener(port) + ["--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--logfile", ""]
                    + extraArguments,
                standardInput: .inherit(STDIN_FILENO))
            if Self.waitUntilAccepting(port: port, process: process) {
                self.port = port
                self.process = process
                return
            }
            process.terminate()
            process.waitUntilExit()
            lastError = CocoaError(.fileReadUnknown)
        }
        throw lastError ?? CocoaError(.fileReadUnknown)
    }

    deinit { stop() }

    /// Freezes the server (SIGSTOP): connections are still accepted by the kernel, nothing is answered.
    func pause() {
        process.kill(SIGSTOP)
    }

    /// Lets a frozen server run again (SIGCONT).
    func resume() {
        process.kill(SIGCONT)
    }

    /// Stops the server (SIGKILL by pid) and reaps it.
    func stop() {
        guard process.isRunning else { return }
        process.kill(SIGKILL)
        process.waitUntilExit()
    }

    /// Polls a TCP connect to the port for up to 10 s; a child process's start cannot be driven by a clock.
    private static func waitUntilAccepting(port: Int, process: ChildProcess) -> Bool {
        for _ in 0..<2000 {
            guard process.isRunning else { return false }
            #if canImport(Glibc)
            let socket = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            #else
            let socket = socket(AF_INET, SOCK_STREAM, 0)
            #endif
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(socket)
            if connected { return true }
            usleep(5_000)
        }
        return false
    }
}

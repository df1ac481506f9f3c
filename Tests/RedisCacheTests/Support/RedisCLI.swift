import Foundation
import StrataTestSupport

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// `redis-cli`, run as a child process the way an operator would run it: a writer this library does not
/// control. Debian installs it with `redis-server`; only loopback (`-h 127.0.0.1`).
enum RedisCLI {
    /// The `redis-cli` executable, if one is installed.
    static let executable: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { "\($0)/redis-cli" } + ["/usr/bin/redis-cli"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// Whether the suites that need it run here (CI fails instead of skipping, as for `redis-server`).
    static let testsRun = executable != nil || RedisServer.isCI

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `redis-cli -h 127.0.0.1 -p port arguments…` (with `-x`, `input` is the last argument) and
    /// returns what it printed, without the final newline. Kills it by pid if it has not exited in `timeout`
    /// (10 s unless given; `--cluster` commands wait for the cluster and take longer).
    @discardableResult
    static func run(
        port: Int, _ arguments: [String], input: Data? = nil, timeout: Duration = .seconds(10)
    ) async throws -> String {
        guard let executable else { throw Failure(description: "redis-cli is not installed (required in CI)") }
        let process = try ChildProcess(
            executable, ["-h", "127.0.0.1", "-p", String(port)] + (input == nil ? [] : ["-x"]) + arguments,
            standardInput: input == nil ? .null : .pipe, standardOutput: .pipe, standardError: .standardOutput)
        if let input, let standardInput = process.standardInput {
            try standardInput.write(contentsOf: input)
            try standardInput.close()
        }
        // Poll for a bounded time, then kill: the output pipe is read after exit, as before (replies are small).
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(2)) }
        if process.isRunning {
            process.kill(SIGKILL)
            throw Failure(description: "redis-cli \(arguments.joined(separator: " ")) did not exit in \(timeout)")
        }
        let printed = String(decoding: process.standardOutput?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        guard let termination = process.termination, termination == .exited(0) else {
            throw Failure(description: "redis-cli ended with \(String(describing: process.termination)): \(printed)")
        }
        return printed.hasSuffix("\n") ? String(printed.dropLast()) : printed
    }
}

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
    /// (10 s unless given; `--cluster` commands wait for the cluster and take longer). With `printsMuch`
    /// its output goes to a temporary file rather than a pipe, which a command that prints more than a pipe
    /// holds (`--cluster reshard` prints a line per slot) would fill and block on.
    @discardableResult
    static func run(
        port: Int, _ arguments: [String], input: Data? = nil, timeout: Duration = .seconds(10),
        printsMuch: Bool = false
    ) async throws -> String {
        guard let executable else { throw Failure(description: "redis-cli is not installed (required in CI)") }
        let outputFile = FileManager.default.temporaryDirectory.appendingPathComponent("redis-cli-\(UUID().uuidString)")
        let outputDescriptor = printsMuch ? open(outputFile.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600) : -1
        if printsMuch && outputDescriptor < 0 { throw Failure(description: "cannot create \(outputFile.path)") }
        defer {
            if outputDescriptor >= 0 {
                close(outputDescriptor)
                unlink(outputFile.path)
            }
        }
        let process = try ChildProcess(
            executable, ["-h", "127.0.0.1", "-p", String(port)] + (input == nil ? [] : ["-x"]) + arguments,
            standardInput: input == nil ? .null : .pipe,
            standardOutput: printsMuch ? .inherit(outputDescriptor) : .pipe, standardError: .standardOutput)
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
        let output = printsMuch ? (try? Data(contentsOf: outputFile)) : process.standardOutput?.readDataToEndOfFile()
        let printed = String(decoding: output ?? Data(), as: UTF8.self)
        guard let termination = process.termination, termination == .exited(0) else {
            throw Failure(description: "redis-cli ended with \(String(describing: process.termination)): \(printed)")
        }
        return printed.hasSuffix("\n") ? String(printed.dropLast()) : printed
    }
}

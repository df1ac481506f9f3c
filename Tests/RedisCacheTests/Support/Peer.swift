import Foundation
import StrataTestSupport

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// A running `strata-invalidation-peer` (Tests/InvalidationPeer): a second process holding its own
/// `MultiCache([memory, redis])`, driven one line at a time (its command list is at the top of its
/// `main.swift`).
///
/// Its blocking reads run on a thread of their own, never on the cooperative pool (which has as many
/// threads as cores, and other tests need them). A peer that does not answer within ``answerTimeout`` is
/// killed and the read throws, so a hung child never hangs the suite; ``stop()`` (also run by `deinit`)
/// kills it by pid, so a failed test leaves no child behind.
final class Peer: @unchecked Sendable {
    // @unchecked Sendable is sound: `buffer` is touched only by `blockingLine()`, and the tests await each
    // read before they start the next, so no two reads overlap; the rest is immutable after `init`.
    private let process: ChildProcess
    private let input: FileHandle
    private let output: FileHandle
    private var buffer = Data()

    /// How long one answer may take before the peer is declared hung (its own waits end within 10 s).
    static let answerTimeout: Duration = .seconds(60)

    struct NoAnswer: Error, CustomStringConvertible {
        var description: String { "strata-invalidation-peer did not answer (killed)" }
    }

    /// Starts the peer; it prints "ready" (read it with ``line()``) once its tracking connection is on.
    ///
    /// - Parameters:
    ///   - port: Where its data connections go (the server, or a proxy).
    ///   - trackingPort: Where its tracking connection goes, or `nil` for `port`.
    ///   - leaseSeconds: Its load lease's duration, or `nil` for the default.
    init(port: Int, namespace: String, masterKey: Data, trackingPort: Int? = nil, leaseSeconds: Int? = nil) throws {
        _ = Self.ignoringBrokenPipes
        var environment = ProcessInfo.processInfo.environment
        if let leaseSeconds { environment["STRATA_PEER_LEASE_SECONDS"] = String(leaseSeconds) }
        process = try ChildProcess(
            try Self.executable().path,
            [String(port), namespace, masterKey.base64EncodedString()] + (trackingPort.map { [String($0)] } ?? []),
            environment: environment, standardInput: .pipe, standardOutput: .pipe,
            standardError: .inherit(STDERR_FILENO))
        // Both are set for `.pipe`.
        input = process.standardInput!
        output = process.standardOutput!
    }

    deinit { stop() }

    /// A write to a peer that died must fail with `EPIPE`, not end the test process with `SIGPIPE`.
    private static let ignoringBrokenPipes: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    /// Sends `command` and returns the peer's one-line answer.
    func ask(_ command: String) async throws -> String {
        send(command)
        return try await line()
    }

    /// Sends `command` without reading its answer (read it later with ``line()``).
    func send(_ command: String) {
        // A peer that died closed its end: the write fails with EPIPE (SIGPIPE is ignored), and the next
        // read reports the death.
        try? input.write(contentsOf: Data((command + "\n").utf8))
    }

    /// The next line the peer printed.
    func line() async throws -> String {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
            Thread { continuation.resume(with: Result { try self.blockingLine() }) }.start()
        }
    }

    private func blockingLine() throws -> String {
        let deadline = ContinuousClock.now + Self.answerTimeout
        let descriptor = output.fileDescriptor
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<end], as: UTF8.self)
                buffer = Data(buffer[(end + 1)...])
                return line
            }
            let left = deadline - ContinuousClock.now
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = max(0, Int32(left.components.seconds * 1_000))
            guard left > .zero else {
                stop()
                throw NoAnswer()
            }
            let ready = poll(&entry, 1, milliseconds)
            // A signal cut the wait short: wait again, rather than block in `read` past the deadline.
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else {
                stop()
                throw NoAnswer()
            }
            var chunk = [UInt8](repeating: 0, count: 4_096)
            let count = read(descriptor, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw NoAnswer() }  // the peer exited
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// Asks the peer to exit and waits for it (at most 10 s, then `SIGKILL`).
    func quit() async {
        send("quit")
        try? input.close()
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(2)) }
        stop()
    }

    /// Kills the peer if it still runs (a later `isRunning`, or `ChildProcess`'s deinit, reaps it).
    func stop() {
        if process.isRunning { process.kill(SIGKILL) }
    }

    /// The peer's Redis tier health as numbers: `tracking` (0 or 1), `connects`, `losses`, `corrupt`.
    func health() async throws -> [String: Int] {
        let words = try await ask("health").split(separator: " ")
        var fields: [String: Int] = [:]
        for index in stride(from: 0, to: words.count - 1, by: 2) {
            fields[String(words[index])] = Int(words[index + 1])
        }
        return fields
    }

    /// How many `.all` the peer's `MultiCache` applied (memory-tier flushes) so far.
    func flushes() async throws -> Int {
        Int(try await ask("flushes").split(separator: " ").last ?? "") ?? -1
    }

    /// Waits (inside the peer, at most 10 s) until it applied more than `seen` flushes; returns the count.
    func awaitFlush(after seen: Int) async throws -> Int {
        Int(try await ask("awaitflush \(seen)").split(separator: " ").last ?? "") ?? -1
    }

    /// Asks the peer `command` every 2 ms until the answer satisfies `done`, or until `timeout` passes.
    /// Returns the answers in order (the last one satisfies `done` unless the deadline passed first).
    /// Used where another process decides the timing: the deadline bounds the wait, never a fixed sleep.
    func askRepeatedly(
        _ command: String, timeout: Duration = .seconds(10), until done: (String) -> Bool
    ) async throws -> [String] {
        let deadline = ContinuousClock.now + timeout
        var answers: [String] = []
        while true {
            let answer = try await ask(command)
            answers.append(answer)
            if done(answer) || ContinuousClock.now >= deadline { return answers }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// The peer SwiftPM built next to the test runner (the test target depends on it, so `swift build
    /// --build-tests` and `swift test` build it, in whatever scratch path they use).
    static func executable() throws -> URL {
        try BuiltProduct.url(named: "strata-invalidation-peer")
    }
}

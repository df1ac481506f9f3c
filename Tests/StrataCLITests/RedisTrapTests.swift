import Foundation
import StrataTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Redis traps of issue 28: a path that looks like a database number, a server that is not Redis, a
/// master key other than the namespace's, `stats` showing the tier, and checkouts at different paths sharing
/// `exec` results through one server.
@Suite(
    .serialized, .enabled(if: CLIRedisServer.runs, "redis-server not found: CLI Redis tests skipped (CI fails instead)")
)
struct RedisTrapTests {
    @Test(arguments: ["0", "15", "007"])
    func aNumericNamespaceIsRefusedAsADatabaseNumber(path: String) throws {
        // Given a URL whose path is a number, as other clients write a database number
        let harness = try StrataHarness()
        let url = "redis://127.0.0.1:6379/\(path)"

        // When it is given on the command line or in the environment
        for result in [
            try harness.run(["--redis", url, "set", "k", "v"]),
            try harness.run(["set", "k", "v"], extraEnvironment: ["STRATA_REDIS_URL": url]),
        ] {
            // Then it is one line, exit 2, saying the path is a namespace, and nothing was stored
            #expect(result.status == 2)
            #expect(result.errorLines.count == 1)
            let line = result.errorLines.first ?? ""
            #expect(
                line.hasPrefix("strata: bad Redis URL: the path /\(path) looks like a database number"), "\(line)")
            #expect(line.contains("reads the path as a namespace"), "\(line)")
            #expect(line.contains("/ns\(path)"), "\(line)")
        }
        #expect(!FileManager.default.fileExists(atPath: harness.store.path))
    }

    @Test func aNamespaceWithALetterIsANamespace() throws {
        // Given a namespace of digits and a letter, and a server that answers
        let server = try CLIRedisServer()
        let harness = try StrataHarness()
        let url = "redis://127.0.0.1:\(server.port)/ns0"
        // Then it is used without a word
        let set = try harness.run(["--redis", url, "set", "k", "v"])
        #expect(set.status == 0)
        #expect(set.errorText == "")
    }

    @Test(arguments: [
        "HTTP/1.1 400 Bad Request\r\nContent-Type: text/html\r\nContent-Length: 6\r\n\r\n<html>",
        "<!DOCTYPE html>\n",
        "SSH-2.0-OpenSSH_9.6\r\n",
    ])
    func aServerThatIsNotRedisIsNamedAsSuch(reply: String) throws {
        // Given a loopback listener that answers every connection with bytes that are not RESP
        let listener = try NotRedisListener(reply: Data(reply.utf8))
        let harness = try StrataHarness()
        let url = "redis://127.0.0.1:\(listener.port)/cli-not-redis"

        // When a command is pointed at it
        let set = try harness.runAnswered(["--redis", url, "set", "k", "v"])

        // Then one warning says the server does not speak Redis, and the local store did the work
        #expect(set.status == 0)
        #expect(set.errorLines.count == 1)
        let line = set.errorLines.first ?? ""
        #expect(
            line.hasPrefix("strata: warning: the server at 127.0.0.1:\(listener.port) does not speak Redis"),
            "\(line)")
        #expect(try harness.run(["get", "k"]).outputText == "v")
        // And stats shows the same in its state row
        let stats = try harness.runAnswered(["--redis", url, "stats", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: stats.standardOutput) as? [String: Any])
        let redis = try #require(object["redis"] as? [String: Any])
        #expect(
            (redis["state"] as? String)?.hasPrefix("the server at 127.0.0.1:\(listener.port) does not speak Redis")
                == true)
    }

    @Test func aWrongMasterKeyOnTheNamespaceIsNamedNotMistakenForAnOutage() throws {
        // Given a namespace written by a store with one master key
        let server = try CLIRedisServer()
        let first = try StrataHarness()
        let second = try StrataHarness()
        let url = "redis://127.0.0.1:\(server.port)/cli-keys"
        #expect(try first.run(["--redis", url, "set", "k", "v"]).status == 0)

        // When a store with another master key uses the namespace
        let get = try second.run(["--redis", url, "get", "k"])

        // Then one warning says the master key differs from the namespace's, not that Redis is passing away
        #expect(get.status == 1)
        #expect(get.errorLines.count == 1)
        let line = get.errorLines.first ?? ""
        #expect(line.hasPrefix("strata: warning: Redis at 127.0.0.1:\(server.port) not used: "), "\(line)")
        #expect(line.contains("its namespace \"cli-keys\" was written with a different master key"), "\(line)")
        #expect(!line.contains("for the rest of this run"), "\(line)")
        // And a write under the other key is the local store's alone: not kept for a replay that would be
        // refused on every run
        let set = try second.run(["--redis", url, "set", "k2", "w"])
        #expect(set.status == 0)
        #expect(set.errorLines.count == 1)
        #expect(try second.run(["get", "k2"]).outputText == "w")
        // and so is an exec result, whose write follows the run's first refusal
        let exec = try second.run(["--redis", url, "exec", "--", "echo", "hi"])
        #expect(exec.outputText == "hi\n")
        #expect(exec.errorLines.count == 1)
        // And stats says so too
        let stats = try second.run(["--redis", url, "stats"]).outputText
        #expect(stats.contains("different master key"), "\(stats)")
        #expect(stats.contains("redis pending writes       0"), "\(stats)")
        // And the first store's value is untouched
        #expect(try first.run(["--redis", url, "get", "k"]).outputText == "v")
    }

    @Test func statsShowsTheRedisTier() throws {
        // Given a store sharing through a server that answers
        let server = try CLIRedisServer()
        let harness = try StrataHarness()
        let url = "redis://127.0.0.1:\(server.port)/cli-stats"

        // When stats is asked for, as text and as JSON
        let text = try harness.run(["--redis", url, "stats"])
        let json = try harness.run(["--redis", url, "stats", "--json"])

        // Then it shows the address and namespace, that the server answers, the breaker and the counters
        #expect(text.status == 0)
        #expect(text.errorText == "")
        let rows = Dictionary(
            text.outputText.split(separator: "\n").map { line -> (String, String) in
                let parts = line.split(separator: "  ", maxSplits: 1)
                return (String(parts[0]), parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
            }, uniquingKeysWith: { first, _ in first })
        #expect(rows["redis"] == "127.0.0.1:\(server.port) namespace cli-stats")
        #expect(rows["redis state"] == "answering")
        #expect(rows["redis breaker"] == "closed")
        #expect(rows["redis connects"] == "1")
        #expect(rows["redis deadline misses"] == "0")
        // The store's rows keep their names
        #expect(rows["hits"] == "0")
        let object = try #require(try JSONSerialization.jsonObject(with: json.standardOutput) as? [String: Any])
        let redis = try #require(object["redis"] as? [String: Any])
        #expect(redis["address"] as? String == "127.0.0.1:\(server.port)")
        #expect(redis["namespace"] as? String == "cli-stats")
        #expect(redis["state"] as? String == "answering")
        #expect(redis["isBreakerOpen"] as? Bool == false)
        #expect(redis["connects"] as? Int == 1)
        // And without Redis there is no Redis row or object
        #expect(!(try harness.run(["stats"]).outputText.contains("redis")))
        let plain = try harness.run(["stats", "--json"]).standardOutput
        #expect((try JSONSerialization.jsonObject(with: plain) as? [String: Any])?["redis"] == nil)
    }

    @Test func statsShowsAServerThatDoesNotAnswer() throws {
        let server = try CLIRedisServer()
        let port = server.port
        server.stop()
        let harness = try StrataHarness()
        let stats = try harness.run(["--redis", "redis://127.0.0.1:\(port)/cli-dead", "stats"])
        #expect(stats.status == 0)
        let state = stats.outputText.split(separator: "\n").first { $0.hasPrefix("redis state") } ?? ""
        #expect(state.contains("not answering: "), "\(stats.outputText)")
        #expect(state.contains("Connection refused"), "\(stats.outputText)")
    }

    @Test func checkoutsAtDifferentPathsWithTheirOwnStoresShareAnExecResult() throws {
        // Given two agents, each with its own store and its checkout at its own path, one server and key
        let server = try CLIRedisServer()
        let first = try StrataHarness()
        let second = try StrataHarness()
        let url = "redis://127.0.0.1:\(server.port)/cli-fleet"
        let firstCheckout = try first.makeFolder("agent/checkout")
        let secondCheckout = try second.makeFolder("elsewhere/src/repo")
        let firstSub = try first.makeFolder("agent/checkout/tools")
        let secondSub = try second.makeFolder("elsewhere/src/repo/tools")
        let marker = first.path("marker")
        let command = ["sh", "-c", "echo run >> \"$0\"; echo fleet-output", marker]

        // When each runs the same command in its `tools`, keyed relative to its checkout
        let ran = try first.run(
            ["--redis", url, "exec", "--ttl", "10m", "--key-cwd", "relative:\(firstCheckout.path)", "--"] + command,
            directory: firstSub)
        let replayed = try second.run(
            ["--redis", url, "exec", "--ttl", "10m", "--key-cwd", "relative:\(secondCheckout.path)", "--"] + command,
            key: .some(first.key), directory: secondSub)

        // Then the second agent replays the first one's result through Redis, and the command ran once
        #expect(ran.status == 0)
        #expect(replayed.status == 0)
        #expect(replayed.outputText == "fleet-output\n")
        #expect(replayed.errorText == "")
        #expect(first.lineCount("marker") == 1)
    }
}

/// A loopback TCP listener that reads what a client sends, answers with fixed bytes and hangs up: a server
/// that is not Redis. Stopped (by closing its socket) when released.
final class NotRedisListener: Sendable {
    let port: Int
    private let socket: Int32
    private let stopped = DispatchSemaphore(value: 0)

    init(reply: Data) throws {
        // A port no other test of this process had: a finished test's client may still reconnect to its own.
        let (fd, port) = try LoopbackPorts.bindUnclaimed(backlog: 16)
        socket = fd
        self.port = port
        let stopped = self.stopped
        let bytes = [UInt8](reply)
        Thread.detachNewThread {
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { break }  // the listening socket was shut down
                var buffer = [UInt8](repeating: 0, count: 4096)
                _ = read(connection, &buffer, buffer.count)
                _ = bytes.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                close(connection)
            }
            stopped.signal()
        }
    }

    deinit {
        shutdown(socket, Int32(SHUT_RDWR))
        stopped.wait()
        close(socket)
    }
}

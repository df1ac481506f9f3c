import Foundation
import Testing

@testable import RedisCache

#if canImport(Glibc)
import Glibc
#endif

/// The two-process case: this test process and a `strata-invalidation-peer` child, each with its own
/// `MultiCache([memory, redis])` on one server and namespace.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisInvalidationProcessTests {
    @Test func aSetInOneProcessStopsTheOtherServingTheOldValue() async throws {
        let server = try RedisServer()
        let namespace = RedisTier.namespace()
        let masterKey = RedisTier.randomMasterKey()
        let here = try InvalidationStack(port: server.port, namespace: namespace, masterKey: masterKey)
        #expect(await here.waitUntilTracking())
        let peer = try Peer(port: server.port, namespace: namespace, masterKey: masterKey)
        #expect(try await peer.line() == "ready")

        try await here.multi.setValue("old", forKey: "k")
        #expect(try await peer.ask("settle") == "settled")
        #expect(try await peer.ask("get k") == "value old")
        #expect(try await peer.ask("peek k") == "value old")  // the peer's memory tier holds it now

        try await here.multi.setValue("new", forKey: "k")
        #expect(try await peer.ask("await k") == "invalidated k")
        #expect(try await peer.ask("peek k") == "nil")
        #expect(try await peer.ask("get k") == "value new")

        // And the other way round, on a key this process never wrote (so no own write comes back)
        #expect(try await peer.ask("set j p0") == "ok")
        #expect(await here.settle())
        #expect(try await here.multi.value(forKey: "j") == "p0")
        #expect(here.memory.value(forKey: "j") == "p0")
        #expect(try await peer.ask("set j p1") == "ok")
        #expect(await here.log.waitForKey("j"))
        #expect(here.memory.value(forKey: "j") == nil)
        #expect(try await here.multi.value(forKey: "j") == "p1")
        await peer.quit()
    }
}

/// A running `strata-invalidation-peer`, driven one line at a time.
///
/// Its blocking reads run on a thread of their own, never on the cooperative pool (which has as many
/// threads as cores, and other tests need them).
final class Peer: @unchecked Sendable {
    // @unchecked Sendable is sound: `buffer` is touched only by `blockingLine()`, and the test awaits
    // each read before it starts the next, so no two reads overlap; the rest is immutable after `init`.
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffer = Data()

    init(port: Int, namespace: String, masterKey: Data) throws {
        process.executableURL = try Self.executable()
        process.arguments = [String(port), namespace, masterKey.base64EncodedString()]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Sends `command` and returns the peer's one-line answer.
    func ask(_ command: String) async throws -> String {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
        return try await line()
    }

    /// The next line the peer printed; the peer bounds its own waits (10 s), so this read ends.
    func line() async throws -> String {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<String, any Error>) in
            Thread { continuation.resume(with: Result { try self.blockingLine() }) }.start()
        }
    }

    private func blockingLine() throws -> String {
        while true {
            if let end = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[buffer.startIndex..<end], as: UTF8.self)
                buffer = Data(buffer[(end + 1)...])
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            guard !chunk.isEmpty else { throw CocoaError(.fileReadUnknown) }
            buffer.append(chunk)
        }
    }

    /// Asks the peer to exit and waits for it (at most 10 s, then `SIGKILL`).
    func quit() async {
        input.fileHandleForWriting.write(Data("quit\n".utf8))
        try? input.fileHandleForWriting.close()
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(2)) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// The peer SwiftPM built next to the test runner.
    static func executable() throws -> URL {
        var candidates: [URL] = []
        if let runner = Bundle.main.executableURL {
            candidates.append(runner.deletingLastPathComponent().appendingPathComponent("strata-invalidation-peer"))
        }
        candidates.append(
            Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("strata-invalidation-peer"))
        let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        candidates.append(package.appendingPathComponent(".build/debug/strata-invalidation-peer"))
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0.path) }) else {
            throw CocoaError(.fileNoSuchFile)
        }
        return found
    }
}

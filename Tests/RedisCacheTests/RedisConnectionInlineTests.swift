import Foundation
import Testing

@testable import RedisConnection

/// Inline exchanges: a caller that finds the connection idle writes and reads on its own thread; a reply
/// slower than the inline wait, and requests queued meanwhile, are the I/O thread's again.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisConnectionInlineTests {
    @Test func sequentialRequestsOnAnIdleConnectionAreAnsweredWithoutTheIOThread() async throws {
        let server = try RedisServer()
        let connection = try RedisTesting.connection(port: server.port)
        // Given a connected, idle connection
        _ = try await connection.send(RESPCommand("SET", "k", "v"))
        let before = connection.statistics
        // When one task sends 200 requests one after another
        for index in 0..<200 {
            let reply = try await connection.send(RESPCommand("ECHO", String(index)))
            #expect(reply == RedisTesting.bulk(String(index)))
        }
        // Then most were answered on the caller's thread (the first may find the I/O thread not yet parked;
        // a reply slower than the inline wait on a loaded machine goes back to the I/O thread)
        let after = connection.statistics
        #expect(after.inlineReplies - before.inlineReplies >= 100)
        #expect(after.connects == 1)
        print(
            "inline: \(after.inlineReplies - before.inlineReplies) of 200 sequential replies read on the caller's thread"
        )
        await connection.close()
    }

    @Test func withNoInlineWaitEveryRequestGoesThroughTheIOThread() async throws {
        let server = try RedisServer()
        var configuration = RedisConnection.Configuration(port: server.port, readTimeout: .seconds(2))
        configuration.inlineReplyWait = .zero
        let connection = try RedisConnection(configuration: configuration)
        for index in 0..<50 {
            #expect(try await connection.send(RESPCommand("ECHO", String(index))) == RedisTesting.bulk(String(index)))
        }
        #expect(connection.statistics.inlineReplies == 0)
        await connection.close()
    }

    @Test func aSlowReplyIsHandedToTheIOThreadAndRequestsQueuedMeanwhileKeepTheirOrder() async throws {
        let server = try RedisServer()
        // A read deadline beyond the test's own waits: the pop must still be pending when the test looks.
        let connection = try RedisTesting.connection(port: server.port, readTimeout: .seconds(60))
        // Every deadline of the observer is an hour's worth: CI once saw neither its polls nor its push answered
        // while ThreadSanitizer and other suites held both cores.
        let observer = try RedisTesting.connection(
            port: server.port, readTimeout: .seconds(3_600), writeTimeout: .seconds(3_600),
            connectTimeout: .seconds(3_600), keepAlive: .seconds(3_600))
        #expect(try await observer.send(RESPCommand("PING")) == .simpleString("PONG"))
        // (the first request connects through the I/O thread, which then parks the idle socket unclaimed; the
        // test waits for that, or on a loaded machine the pop could be queued to the I/O thread before it
        // parks, and never be written inline)
        _ = try await connection.send(RESPCommand("PING"))
        let patience = ContinuousClock.now + .seconds(60)
        while connection.core.withState({ $0.parked == nil }), ContinuousClock.now < patience {
            try await Task.sleep(for: .milliseconds(1))
        }
        #expect(connection.core.withState { $0.parked != nil })
        let inlineBefore = connection.statistics.inlineReplies
        // Given a request the server answers only when another client pushes (a blocking pop, no timeout),
        // sent on the idle connection: its reply cannot come within the inline wait
        let slow = Task { try await connection.send(RESPCommand("BLPOP", "queue", "0")) }
        let blocked = await Self.waitForBlockedClients(1, observer)
        #expect(blocked.seen, "the observer's last failure: \(String(describing: blocked.lastError))")
        // When more requests are sent while it waits, and then the pop is answered
        let incrs = Task {
            try await withThrowingTaskGroup(of: RESPValue.self) { group in
                for _ in 0..<20 { group.addTask { try await connection.send(RESPCommand("INCR", "counter")) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        _ = try await observer.send(RESPCommand("LPUSH", "queue", "item"))
        // Then the pop gets its own reply from the I/O thread, and every later request its own, in order
        // behind it: the counter values 1...20, each once
        #expect(try await slow.value == .array([RedisTesting.bulk("queue"), RedisTesting.bulk("item")]))
        #expect(connection.statistics.inlineHandoffs >= 1)
        let replies = try await incrs.value
        let values = replies.compactMap { reply -> Int64? in
            if case .integer(let value) = reply { return value }
            return nil
        }
        #expect(values.sorted() == Array(1...20))
        #expect(try await connection.send(RESPCommand("GET", "counter")) == RedisTesting.bulk("20"))
        #expect(connection.statistics.connects == 1)
        #expect(connection.statistics.deadlineMisses == 0)
        // And the connection goes back to answering inline once idle (after one lone request through the
        // I/O thread: the overlapping requests before made it keep the socket)
        for _ in 0..<20 { _ = try await connection.send(RESPCommand("PING")) }
        #expect(connection.statistics.inlineReplies > inlineBefore)
        await connection.close()
        await observer.close()
    }

    /// Polls until the server reports `count` blocked clients; whether it did, and the last failure of a poll
    /// (a poll that fails is tried again). The bound is one only a hang reaches: under ThreadSanitizer beside
    /// other work, 30 s once passed before the pop was sent.
    private static func waitForBlockedClients(
        _ count: Int, _ observer: RedisConnection
    ) async -> (seen: Bool, lastError: (any Error)?) {
        let start = ContinuousClock.now
        var lastError: (any Error)?
        while ContinuousClock.now - start < .seconds(300) {
            do {
                let text = try await observer.send(RESPCommand("INFO", "clients")).string ?? ""
                if text.split(whereSeparator: \.isNewline).contains(where: { $0 == "blocked_clients:\(count)" }) {
                    return (true, lastError)
                }
            } catch {
                lastError = error
            }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return (false, lastError)
    }
}

import Testing

@testable import RedisConnection

/// `send(adjacent:)`: the run reaches the server with nothing between its commands, however many other
/// requests the same connection carries at the time (what `ASKING` + command needs).
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisConnectionAdjacentTests {
    @Test func nothingElseOnTheConnectionRunsBetweenTheCommandsOfARun() async throws {
        // Given one connection and 400 concurrent tasks incrementing one counter: half alone, half as an
        // adjacent run of INCR then GET
        let server = try RedisServer()
        let connection = try RedisTesting.connection(port: server.port, readTimeout: .seconds(30))
        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<400 {
                group.addTask {
                    if index % 2 == 0 {
                        _ = try await connection.send(RESPCommand("INCR", "adjacent-counter"))
                        return 0
                    }
                    let replies = try await connection.send(
                        adjacent: [RESPCommand("INCR", "adjacent-counter"), RESPCommand("GET", "adjacent-counter")])
                    // When a run's GET sees the value its own INCR made, nothing ran between them
                    guard case .integer(let made) = try replies[0].get(),
                        try replies[1].get() == .bulkString(Array(String(made).utf8))
                    else { return 1 }
                    return 0
                }
            }
            return try await group.reduce(0, +)
        }
        // Then every run was adjacent, and every increment happened once
        #expect(mismatches == 0)
        #expect(try await connection.send(RESPCommand("GET", "adjacent-counter")) == RedisTesting.bulk("400"))
        await connection.close()
        server.stop()
    }

    @Test func aClosedConnectionRefusesEveryCommandOfTheRun() async throws {
        let server = try RedisServer()
        let connection = try RedisTesting.connection(port: server.port)
        await connection.close()
        let replies = try await connection.send(adjacent: [RESPCommand("ASKING"), RESPCommand("GET", "k")])
        #expect(replies.count == 2)
        for reply in replies {
            #expect(throws: ConnectionError.self) { try reply.get() }
        }
        server.stop()
    }
}

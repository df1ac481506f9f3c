import Foundation
import Testing

/// `strata --redis URL rm --tag T`: the tag is removed in the invoking store and in Redis, so every other
/// store that reads through the server misses the tagged entries.
@Suite(
    .serialized, .enabled(if: CLIRedisServer.runs, "redis-server not found: CLI Redis tests skipped (CI fails instead)")
)
struct RedisTagCommandTests {
    @Test func rmTagRemovesTheTaggedEntriesInTheLocalStoreAndInRedis() throws {
        let server = try CLIRedisServer()
        let first = try StrataHarness()
        let second = try StrataHarness()
        let third = try StrataHarness()
        let url = "redis://127.0.0.1:\(server.port)/cli-tags"
        let run = { (harness: StrataHarness, arguments: [String]) throws -> StrataResult in
            try RunningStrata(
                arguments: ["--store", harness.store.path, "--redis", url] + arguments, stdin: nil,
                environment: harness.environment(key: first.key, extra: [:]), directory: first.root
            ).wait()
        }
        #expect(try run(first, ["set", "tagged", "t-value", "--tag", "t"]).status == 0)
        #expect(try run(first, ["set", "plain", "p-value"]).status == 0)
        // Read through Redis into the second store (written back there with its tag).
        #expect(try run(second, ["get", "tagged"]).outputText == "t-value")

        let removal = try run(second, ["rm", "--tag", "t"])
        #expect(removal.status == 0)
        #expect(removal.errorText == "")

        #expect(try run(second, ["get", "tagged"]).status == 1)  // its own store and Redis
        #expect(try run(third, ["get", "tagged"]).status == 1)  // Redis alone
        #expect(try run(third, ["get", "plain"]).outputText == "p-value")
    }
}

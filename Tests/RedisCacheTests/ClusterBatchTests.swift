import CacheCore
import Testing

@testable import RedisConnection

/// A batch's failures stay per command and inside the batch's one deadline, against a scripted node in
/// cluster mode whose map may leave slots without a primary.
@Suite struct ClusterBatchTests {
    @Test func aSlotWithoutPrimaryFailsOnlyItsCommandsWithATypedError() async throws {
        // Given a node that serves slots 0…8191 and a map in which no primary serves 8192…16383
        let node = try ScriptedClusterNode(lastServedSlot: 8_191) { _ in "$1\r\nv\r\n" }
        let connection = node.connection(operationTimeout: .milliseconds(200))
        let served = Self.key { $0 <= 8_191 }
        let orphan = Self.key { $0 > 8_191 }

        // When a batch reads a key of each half
        let results = try await connection.send(batch: [
            (RESPCommand("GET", served), Array(served.utf8)), (RESPCommand("GET", orphan), Array(orphan.utf8)),
        ])
        // Then the served key's command succeeds and only the other one fails, with CLUSTERDOWN
        #expect(results.count == 2)
        #expect(try results[0].get() == .bulkString(Array("v".utf8)))
        #expect(throws: ConnectionError.self) { try results[1].get() }
        if case .failure(let error as ConnectionError) = results[1] {
            #expect(error.code == .serverError)
            #expect(error.message.hasPrefix("CLUSTERDOWN"))
        }
        await connection.close()
    }

    /// The first key of the form `k<n>` whose slot satisfies `accepts`.
    private static func key(where accepts: (Int) -> Bool) -> String {
        (0...).lazy.map { "k\($0)" }.first { accepts(HashSlot(key: Array($0.utf8)).rawValue) }!
    }
}

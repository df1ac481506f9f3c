import CacheCore
import Foundation
import Testing

@testable import RedisConnection

/// `RedisConnection.send(together:caller:)`: requests on several idle connections written and read on the
/// caller's thread at once (a cluster read's epoch and entry on two primaries), a second request on one
/// connection after its first.
@Suite(.enabled(if: RedisServer.suitesRun, RedisServer.skipNote))
struct RedisConnectionTogetherTests {
    @Test func requestsOnTwoIdleConnectionsAreAnsweredInlineAndInOrder() async throws {
        let first = try RedisServer()
        let second = try RedisServer()
        let one = try RedisTesting.connection(port: first.port)
        let other = try RedisTesting.connection(port: second.port)
        // Given two connected, idle connections, each server holding a value of its own
        _ = try await one.send(RESPCommand("SET", "k", "one"))
        _ = try await other.send(RESPCommand("SET", "k", "other"))
        let before = (one.statistics.inlineReplies, other.statistics.inlineReplies)
        for round in 0..<100 {
            // When one call sends a GET to each and an ECHO behind the first connection's GET
            let replies = Locked<[Int: RESPValue]>([:])
            let caller = withUnsafeCurrentTask { $0?.hashValue ?? 0 }
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                let remaining = Locked(3)
                func record(_ index: Int) -> @Sendable (Result<RESPValue, any Error>) -> Void {
                    { result in
                        replies.withLock { $0[index] = (try? result.get()) ?? .null }
                        if remaining.withLock({ count in
                            count -= 1
                            return count == 0
                        }) {
                            done.resume()
                        }
                    }
                }
                RedisConnection.send(
                    together: [
                        .init(connection: one, command: RESPCommand("GET", "k"), completion: record(0)),
                        .init(connection: other, command: RESPCommand("GET", "k"), completion: record(1)),
                        .init(connection: one, command: RESPCommand("ECHO", String(round)), completion: record(2)),
                    ], caller: caller)
            }
            // Then each request gets its own server's reply
            let got = replies.withLock { $0 }
            #expect(got[0] == RedisTesting.bulk("one"))
            #expect(got[1] == RedisTesting.bulk("other"))
            #expect(got[2] == RedisTesting.bulk(String(round)))
        }
        // And most were read on the caller's thread, on both connections (a reply slower than the inline wait
        // on a loaded machine goes back to the I/O thread)
        #expect(one.statistics.inlineReplies - before.0 >= 100)
        #expect(other.statistics.inlineReplies - before.1 >= 50)
        #expect(one.statistics.connects == 1 && other.statistics.connects == 1)
        await one.close()
        await other.close()
    }
}

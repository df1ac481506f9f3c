import CacheCore
import RedisConnection

/// Sends many commands on one connection without waiting between them, for tests that compare thousands of
/// answers with the server's: every command of a batch is queued before the first reply is awaited, so the
/// connection writes them together (one round trip per batch, not per command).
enum Pipeline {
    /// Sends `commands` in batches of `batchSize` and returns their replies in order.
    ///
    /// - Throws: The first error any command of a batch got (an error reply, a deadline).
    static func send(
        _ commands: [RESPCommand], on connection: RedisConnection, batchSize: Int = 5_000
    ) async throws -> [RESPValue] {
        var replies: [RESPValue] = []
        replies.reserveCapacity(commands.count)
        var start = 0
        while start < commands.count {
            let batch = Array(commands[start..<min(start + batchSize, commands.count)])
            replies += try await sendBatch(batch, on: connection)
            start += batch.count
        }
        return replies
    }

    private static func sendBatch(_ batch: [RESPCommand], on connection: RedisConnection) async throws -> [RESPValue] {
        let results = Locked([Result<RESPValue, any Error>?](repeating: nil, count: batch.count))
        let remaining = Locked(batch.count)
        let outcome: [Result<RESPValue, any Error>?] = await withCheckedContinuation { continuation in
            for (index, command) in batch.enumerated() {
                connection.send(command) { result in
                    results.withLock { $0[index] = result }
                    if remaining.withLock({ count -> Bool in
                        count -= 1
                        return count == 0
                    }) {
                        continuation.resume(returning: results.withLock { $0 })
                    }
                }
            }
        }
        return try outcome.map { try $0!.get() }
    }
}

import CacheCore

extension ConnectionCore {
    /// Queues `commands` as one run, so nothing another caller sends lands between them on the wire, and
    /// calls `completion` once with every reply in order; completes at once when the connection refuses
    /// requests (closed, breaker open).
    ///
    /// Never inline: the run is queued under one lock hold, and a caller can borrow the parked socket only
    /// while nothing is queued, so no inline exchange can slip between its commands. Redis Cluster's `ASK`
    /// redirection needs this: `ASKING` applies to the next command of the same connection only.
    func submitAdjacent(
        _ commands: [RESPCommand], completion: @escaping @Sendable ([Result<RESPValue, any Error>]) -> Void
    ) {
        let collector = AdjacentReplies(count: commands.count, completion: completion)
        let outcome: Result<Bool, ConnectionError> = locked.withLock { state in
            if state.isClosing || state.state == .closed {
                return .failure(ConnectionError(.connectionClosed, "the connection was closed"))
            }
            if state.breaker.isOpen {
                state.statistics.rejectedWhileOpen += 1
                return .failure(ConnectionError(.unavailable, "the Redis server is unavailable (circuit breaker open)"))
            }
            for (index, command) in commands.enumerated() {
                let id = state.nextID
                state.nextID += 1
                RESPEncoder.encode(command, into: &state.outbox)
                state.queued.append(Queued(id: id, end: state.outbox.count, queuedAt: .now))
                state.completions[id] = { collector.record($0, at: index) }
            }
            let wake = !state.wakePending
            state.wakePending = true
            if wake { state.statistics.callerSystemCalls += 1 }
            return .success(wake)
        }
        switch outcome {
        case .success(let wake):
            if wake { wakePipe.wake() }
        case .failure(let refusal):
            completion(commands.map { _ in .failure(refusal) })
        }
    }
}

/// Gathers the replies of one adjacent run and reports them together once the last arrives.
private final class AdjacentReplies: Sendable {
    private let results: Locked<[Result<RESPValue, any Error>?]>
    private let completion: @Sendable ([Result<RESPValue, any Error>]) -> Void

    init(count: Int, completion: @escaping @Sendable ([Result<RESPValue, any Error>]) -> Void) {
        results = Locked(Array(repeating: nil, count: count))
        self.completion = completion
    }

    func record(_ result: Result<RESPValue, any Error>, at index: Int) {
        let finished: [Result<RESPValue, any Error>]? = results.withLock { results in
            results[index] = result
            return results.contains { $0 == nil } ? nil : results.map { $0! }
        }
        if let finished { completion(finished) }
    }
}

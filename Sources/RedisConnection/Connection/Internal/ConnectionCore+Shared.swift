import CacheCore

extension ConnectionCore {
    /// Queues `command` for the I/O thread, or — when the same command is already queued for another caller
    /// and the I/O thread has not taken it yet — adds `completion` to that request instead of queuing a second
    /// one. Either way the reply comes from a command written after this call, which is what a read of a
    /// fencing counter needs (the Redis tier's epoch: a reply written before a read began could miss a
    /// `removeAll()` that returned before it). Never inline; completes at once when the connection refuses
    /// requests (closed, breaker open).
    ///
    /// - Parameters:
    ///   - command: A read-only command whose one reply may answer every caller that queued it.
    ///   - completion: Called exactly once with the reply or the failure.
    func submitShared(_ command: RESPCommand, completion: @escaping Completion) {
        let outcome: Result<Bool, ConnectionError> = locked.withLock { state in
            if state.isClosing || state.state == .closed {
                return .failure(ConnectionError(.connectionClosed, "the connection was closed"))
            }
            if state.breaker.isOpen {
                state.statistics.rejectedWhileOpen += 1
                return .failure(ConnectionError(.unavailable, "the Redis server is unavailable (circuit breaker open)"))
            }
            // Joined only while still queued: the I/O thread empties `sharedQueued` as it takes the queue.
            if let callers = state.sharedQueued[command.arguments] {
                callers.add(completion)
                state.statistics.sharedReplies += 1
                return .success(false)
            }
            let id = state.nextID
            state.nextID += 1
            RESPEncoder.encode(command, into: &state.outbox)
            state.queued.append(Queued(id: id, end: state.outbox.count, queuedAt: .now))
            // One list called in a loop, not a completion wrapping the last: thousands may join one request
            // while a reconnect holds the I/O thread, and nested calls that deep would overflow its stack.
            let callers = SharedCallers(completion)
            state.completions[id] = { callers.complete($0) }
            state.sharedQueued[command.arguments] = callers
            let wake = !state.wakePending
            state.wakePending = true
            if wake { state.statistics.callerSystemCalls += 1 }
            return .success(wake)
        }
        switch outcome {
        case .success(let wake):
            if wake { wakePipe.wake() }
        case .failure(let refusal):
            completion(.failure(refusal))
        }
    }
}

extension ConnectionCore.State {
    /// Hands what callers queued to the I/O thread, swapping the buffers with its empty spares rather than
    /// copying them (both sides stay uniquely referenced, so neither reallocates on the next request). Taken
    /// means about to be written: from here on no caller joins a shared request among them.
    mutating func takeQueued(outbox spareOutbox: inout [UInt8], queued spareQueued: inout [ConnectionCore.Queued]) {
        swap(&outbox, &spareOutbox)
        swap(&queued, &spareQueued)
        sharedQueued.removeAll(keepingCapacity: true)
    }
}

/// The callers of one shared request: the one that queued it and those that joined it while it was queued.
final class SharedCallers: Sendable {
    private let completions: Locked<[ConnectionCore.Completion]>

    init(_ first: @escaping ConnectionCore.Completion) {
        completions = Locked([first])
    }

    /// Adds a caller; only while the request is queued (under the connection's lock), so before ``complete(_:)``.
    func add(_ completion: @escaping ConnectionCore.Completion) {
        completions.withLock { $0.append(completion) }
    }

    /// Gives every caller the request's reply or failure, once.
    func complete(_ reply: Result<RESPValue, any Error>) {
        let callers = completions.withLock { completions in
            defer { completions = [] }
            return completions
        }
        for caller in callers { caller(reply) }
    }
}

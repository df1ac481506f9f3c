import CacheCore

// The inline path: a caller that finds the connection idle writes its request and reads the reply on its
// own thread, so a sequential caller pays no thread hand-off (no wake-up of the I/O thread, no resume from
// it). Measured in Docs/Performance.md ("The Redis tier"). Deadlines stay the I/O thread's: a reply that
// does not come within ``RedisConnection/Configuration/inlineReplyWait`` (microseconds, far below any read
// deadline) is handed to the I/O thread as an ordinary written request, timed from when it was written.
extension ConnectionCore {
    /// Runs request `id` on the borrowed `session`, then parks the socket again or gives it back to the
    /// I/O thread. Returns `nil` when `completion` already ran (the reply came inline), else the id under
    /// which the I/O thread will complete it (cancellable like a queued request).
    func exchangeInline(
        _ command: RESPCommand, id: UInt64, on session: SocketSession, completion: @escaping Completion
    ) -> UInt64? {
        let queuedAt = ContinuousClock.now
        let outcome = session.exchange(command, wait: configuration.inlineReplyWait)
        return finishInline(outcome, id: id, on: session, queuedAt: queuedAt, completion: completion)
    }

    /// Takes the parked socket for an inline exchange by `caller` when the connection is idle and the caller
    /// may (the rule of ``submit(_:caller:completion:)``); returns it with the request's id, or `nil` (the
    /// request is then to be submitted).
    func borrowInline(caller: Int) -> (session: SocketSession, id: UInt64)? {
        locked.withLock { state in
            guard !state.isClosing, state.state != .closed, !state.breaker.isOpen, let session = state.parked,
                state.queued.isEmpty, caller == 0 || state.inlineCaller == 0 || state.inlineCaller == caller
            else { return nil }
            if caller != 0 { state.inlineCaller = caller }
            let id = state.nextID
            state.nextID += 1
            // As in `submit`: the I/O thread parked with nothing in flight or queued, so this request is the
            // only one on the wire until the socket is parked again or handed back.
            state.parked = nil
            state.inlineBusy = true
            return (session, id)
        }
    }

    /// Ends the inline exchange of request `id` on the borrowed `session` with `outcome`: parks the socket
    /// again or hands it (and an unanswered request) to the I/O thread. Returns `nil` when `completion`
    /// already ran, else the id under which the I/O thread will complete it.
    func finishInline(
        _ outcome: SocketSession.InlineOutcome, id: UInt64, on session: SocketSession,
        queuedAt: ContinuousClock.Instant,
        completion: @escaping Completion
    ) -> UInt64? {
        let calls = session.systemCalls
        session.systemCalls = 0
        let wake: Bool = locked.withLock { state in
            state.inlineBusy = false
            state.statistics.callerSystemCalls += calls
            state.statistics.writes += 1
            var handoff = Handoff(session: session, request: nil, unwritten: [], writtenAt: nil, failure: nil)
            switch outcome {
            case .reply:
                state.statistics.inlineReplies += 1
                if state.queued.isEmpty, !state.isClosing, !state.ioWantsSession {
                    state.parked = session
                    return false
                }
            case .unfinished(let unwritten, let writtenAt):
                state.statistics.inlineHandoffs += 1
                state.completions[id] = completion
                handoff.request = Queued(id: id, end: unwritten.count, queuedAt: queuedAt)
                handoff.unwritten = unwritten
                handoff.writtenAt = writtenAt
            case .failed(let error, let unwritten, let writtenAt):
                state.statistics.inlineHandoffs += 1
                state.completions[id] = completion
                handoff.request = Queued(id: id, end: unwritten.count, queuedAt: queuedAt)
                handoff.unwritten = unwritten
                handoff.writtenAt = writtenAt
                handoff.failure = error
            }
            state.handoff = handoff
            let wake = !state.wakePending
            state.wakePending = true
            if wake { state.statistics.callerSystemCalls += 1 }
            return wake
        }
        if wake { wakePipe.wake() }
        guard case .reply(let reply) = outcome else { return id }
        completion(IOLoop.result(of: reply))
        return nil
    }
}

import CacheCore

/// One read sent for many concurrent callers, none of whom may be answered by a read written before it
/// asked ("group commit"): the first caller of a line sends its command; callers that come while that
/// command is in flight form the next group, whose one command is sent when the one in flight is answered.
///
/// This is what lets the Redis tier's reads on a cluster share the namespace's epoch `GET`
/// (``ClusterConnection/send(batch:sharing:)``): a read may use only an epoch read written after it began, or
/// a `removeAll()` that returned before the read began could be missed (Docs/RedisCache.md, "Redis Cluster").
/// Joining the command already in flight would break that; joining the next one keeps it, and under load
/// one command answers every caller of a round trip.
///
/// A failure ends the line: the waiting group gets the same failure at once, without a command of its own
/// (each of its callers settles it as its own: a redirected command is sent again alone, and a stopped
/// node's callers fail by one read deadline, not two).
///
/// Thread safety: every method may be called from any thread; the lines sit behind one lock held only to
/// read or change them, never while a caller's completion runs or a command is sent.
final class SharedReads: Sendable {
    /// Receives a line's reply.
    typealias Waiter = @Sendable (Result<RESPValue, any Error>) -> Void

    /// What a line is: one command on one connection.
    struct Line: Hashable {
        var connection: ObjectIdentifier
        var arguments: [[UInt8]]
    }

    private struct State {
        /// The lines with a command in flight, each with the callers waiting for the next one.
        var lines: [Line: [Waiter]] = [:]
        var sharedReplies = 0
    }
    private let state = Locked(State())

    /// Replies given to a caller that sent no command of its own (it waited for its group's).
    var sharedReplies: Int { state.withLock { $0.sharedReplies } }

    /// Joins `line`: returns `true` when the caller is to send the command itself (nothing in flight on the
    /// line) and report its reply with ``answered(_:on:sendingNext:)``; `false` when `waiter` will be called
    /// with the reply of a command sent after this call.
    func join(_ line: Line, waiter: @escaping Waiter) -> Bool {
        state.withLock { state in
            guard state.lines[line] != nil else {
                state.lines[line] = []
                return true
            }
            state.lines[line]!.append(waiter)
            return false
        }
    }

    /// Reports the reply of the command in flight on `line`: a success sends the next group's command through
    /// `sendingNext` (which must call the completion it is given exactly once), a failure is given to that
    /// group as it is; with nobody waiting, the line ends.
    func answered(
        _ reply: Result<RESPValue, any Error>, on line: Line,
        sendingNext: @escaping @Sendable (@escaping Waiter) -> Void
    ) {
        let group: [Waiter] = state.withLock { state in
            let waiting = state.lines[line] ?? []
            let failed = if case .failure = reply { true } else { false }
            if waiting.isEmpty || failed {
                state.lines[line] = nil
            } else {
                state.lines[line] = []
            }
            state.sharedReplies += waiting.count
            return waiting
        }
        guard !group.isEmpty else { return }
        if case .failure = reply {
            for waiter in group { waiter(reply) }
            return
        }
        sendingNext { [self] next in
            for waiter in group { waiter(next) }
            answered(next, on: line, sendingNext: sendingNext)
        }
    }
}

import CacheCore

/// One multiplexed connection to a Redis (or Valkey) server, with deadlines, reconnects and a circuit
/// breaker: the transport of the Redis tier.
///
/// - **Pipelining.** Any number of callers may ``send(_:)`` at once. Requests are queued in a FIFO and
///   the I/O thread writes everything queued in one go; replies are matched to callers in order.
/// - **Deadlines.** A request must be written within ``Configuration/writeTimeout`` and answered within
///   ``Configuration/readTimeout`` of being written; connecting has ``Configuration/connectTimeout``.
///   When one passes, every request pending on the connection fails with
///   ``ConnectionError/Code/deadlineExceeded`` and the connection closes (its reply stream can no longer be
///   matched); the next request reconnects.
/// - **Cancellation.** A cancelled caller gets `CancellationError` at once; its request stays in the FIFO
///   and its reply is read and dropped, so the connection survives.
/// - **Failures.** A lost connection or failed attempt is retried with exponential backoff and full jitter
///   (``CircuitBreaker``). After ``CircuitBreaker/failureThreshold`` consecutive failures the breaker
///   opens: requests fail at once with ``ConnectionError/Code/unavailable``, with one lock and no system call,
///   while the I/O thread probes once per backoff interval; the first success closes it.
/// - **Handshake.** `HELLO 3` with `AUTH` and `SETNAME`, falling back to RESP2 and `AUTH`; a cluster node
///   or a replica is refused with ``ConnectionError/Code/clusterMode`` or ``ConnectionError/Code/replica``.
/// - **Keep-alive.** A `PING` after ``Configuration/keepAliveInterval`` of silence, so a peer that died
///   without closing is noticed within that interval plus the read deadline.
///
/// ```swift
/// let connection = try RedisConnection(configuration: .init(port: 6379))
/// _ = try await connection.send(RESPCommand("SET", "greeting", "hello", "PX", "60000"))
/// let reply = try await connection.send(RESPCommand("GET", "greeting"))  // .bulkString("hello")
/// await connection.close()
/// ```
///
/// - **Inline exchanges.** A request sent while nothing else is in flight or queued is written by the
///   caller's own thread, which then reads for its reply for up to ``Configuration/inlineReplyWait``
///   (100 µs by default) with non-blocking reads, yielding the processor in between; a sequential caller
///   so pays no hand-off to the I/O thread and back. A reply that takes longer is handed to the I/O thread
///   with the request's deadlines unchanged (the read deadline counts from when the request was written),
///   and requests other callers queue meanwhile follow it in order.
///
/// Thread safety: every method may be called from any thread or task. Socket I/O happens on the
/// connection's dedicated thread, or, for an inline exchange, on the caller's thread for at most the
/// inline wait (it never sleeps in the kernel); an `async` caller whose reply is not inline is resumed from
/// the I/O thread. Error replies are thrown as ``ConnectionError`` (see ``ConnectionError/reply(_:)``).
package final class RedisConnection: Sendable {
    let core: ConnectionCore

    /// Creates a connection and starts its I/O thread; it connects lazily, on the first request.
    ///
    /// - Parameter configuration: Server, credentials and deadlines.
    /// - Throws: ``ConnectionError`` with code ``ConnectionError/Code/connectFailed`` when the process has no file
    ///   descriptor left for the I/O thread's wake-up pipe.
    package init(configuration: Configuration) throws(ConnectionError) {
        guard let wakePipe = WakePipe() else {
            throw ConnectionError(.connectFailed, "cannot create the I/O thread's wake-up pipe (out of descriptors?)")
        }
        core = ConnectionCore(configuration: configuration, wakePipe: wakePipe)
        IOLoop.start(core: core)
    }

    deinit {
        core.close()
    }

    /// The settings this connection was created with.
    package var configuration: Configuration { core.configuration }

    /// What the connection is doing now.
    package var state: State { core.withState { $0.state } }

    /// A snapshot of the counters.
    package var statistics: Statistics { core.withState { $0.statistics } }

    /// The breaker's current counters (consecutive failures, next attempt).
    package var breaker: CircuitBreaker { core.withState { $0.breaker } }

    /// Sends `command` and waits for its reply.
    ///
    /// - Parameter command: The command.
    /// - Returns: The server's reply; never an error reply.
    /// - Throws: ``ConnectionError`` for an error reply (typed by ``ConnectionError/reply(_:)``), a missed deadline,
    ///   a lost connection, an open breaker or a malformed reply; `CancellationError` at once when the task
    ///   is cancelled (the connection stays up).
    package func send(_ command: RESPCommand) async throws -> RESPValue {
        try Task.checkCancellation()
        let caller = withUnsafeCurrentTask { $0?.hashValue ?? 0 }
        let ticket = Locked(Ticket.waiting)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<RESPValue, any Error>) in
                let id = core.submit(command, caller: caller) { continuation.resume(with: $0) }
                let cancelled = ticket.withLock { ticket in
                    if case .cancelled = ticket { return true }
                    if let id { ticket = .submitted(id) }
                    return false
                }
                if cancelled, let id { core.cancel(id) }
            }
        } onCancel: {
            let id = ticket.withLock { ticket -> UInt64? in
                defer { ticket = .cancelled }
                if case .submitted(let id) = ticket { return id }
                return nil
            }
            if let id { core.cancel(id) }
        }
    }

    /// Sends `command` and calls `completion` with its reply, for callers without `async`.
    ///
    /// - Parameters:
    ///   - command: The command.
    ///   - completion: Called exactly once, on the connection's I/O thread or (for a request refused at
    ///     once, or answered inline) on the caller's thread before this returns, with the reply or the
    ///     error ``send(_:)`` would throw. It must return quickly.
    ///   - caller: The calling task's identity (`0`: unknown), which decides as in ``send(_:)`` whether the
    ///     caller may take the idle socket for an inline exchange again or must queue its request.
    package func send(
        _ command: RESPCommand, caller: Int = 0, completion: @escaping @Sendable (Result<RESPValue, any Error>) -> Void
    ) {
        _ = core.submit(command, caller: caller, completion: completion)
    }

    /// Sends `commands` back to back, with nothing another caller sends between them, and waits for every
    /// reply: Redis Cluster's `ASKING` followed by the command it unlocks (`ASKING` applies only to the next
    /// command of the same connection).
    ///
    /// - Parameter commands: The commands, in order.
    /// - Returns: Each command's reply or the error ``send(_:)`` would throw for it, in order.
    /// - Throws: `CancellationError` when the task is cancelled before the commands are queued; once queued,
    ///   the run completes within the connection's deadlines whatever happens to the task.
    package func send(adjacent commands: [RESPCommand]) async throws -> [Result<RESPValue, any Error>] {
        try Task.checkCancellation()
        guard !commands.isEmpty else { return [] }
        return await withCheckedContinuation { continuation in
            core.submitAdjacent(commands) { continuation.resume(returning: $0) }
        }
    }

    /// ``send(adjacent:)`` for callers that gather replies from several connections under one wait: queues
    /// `commands` as one run and calls `completion` once with every reply in order, on the I/O thread or (a
    /// refused run) on the caller's thread before this returns. It must return quickly.
    ///
    /// - Parameters:
    ///   - commands: The commands, in order; at least one.
    ///   - completion: Called exactly once with each command's reply or error.
    package func send(
        adjacent commands: [RESPCommand], completion: @escaping @Sendable ([Result<RESPValue, any Error>]) -> Void
    ) {
        core.submitAdjacent(commands, completion: completion)
    }

    /// Closes the connection: requests still pending fail with ``ConnectionError/Code/connectionClosed``,
    /// later ones are refused. Returns once the I/O thread has closed its socket and exited.
    package func close() async {
        core.close()
        await core.waitForTermination()
    }

    /// When the last handshake succeeded, as the I/O thread saw it; for recovery-time tests.
    var lastConnectedAt: ContinuousClock.Instant? { core.withState { $0.lastConnectedAt } }

    /// The read end of the I/O thread's wake-up pipe, for descriptor-leak tests.
    var wakeDescriptor: Int32 { core.wakePipe.readEnd }

    private enum Ticket { case waiting, submitted(UInt64), cancelled }
}

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

extension RedisConnection {
    /// One request of ``send(together:caller:)``.
    package struct TogetherRequest: Sendable {
        /// The connection to send it on.
        package var connection: RedisConnection
        /// The command.
        package var command: RESPCommand
        /// Called exactly once with its reply or the error ``send(_:)`` would throw; it must return quickly.
        package var completion: @Sendable (Result<RESPValue, any Error>) -> Void

        /// - Parameters:
        ///   - connection: The connection to send it on.
        ///   - command: The command.
        ///   - completion: Called exactly once with the reply or the error.
        package init(
            connection: RedisConnection, command: RESPCommand,
            completion: @escaping @Sendable (Result<RESPValue, any Error>) -> Void
        ) {
            self.connection = connection
            self.command = command
            self.completion = completion
        }
    }

    /// Sends requests on several connections at once: the requests of idle connections are written on the
    /// caller's thread one after another and their replies read as they come, each within its connection's
    /// ``Configuration/inlineReplyWait`` (so a read that needs two nodes of a cluster costs about one round
    /// trip, not two, and no hand-off to an I/O thread); the others are queued as ``send(_:caller:completion:)``
    /// queues them. A second request for a connection already used by this call waits for the first's inline
    /// exchange to end, so each connection still carries one inline request at a time.
    ///
    /// - Parameters:
    ///   - requests: The requests; each completion is called exactly once, on this thread (answered inline or
    ///     refused) or on its connection's I/O thread (a reply slower than the inline wait, a busy connection).
    ///   - caller: The calling task's identity (`0`: unknown), as for ``send(_:caller:completion:)``.
    /// - Complexity: Busy-waits (yielding the processor) at most the longest inline wait per round; one round
    ///   per request on the busiest connection.
    package static func send(together requests: [TogetherRequest], caller: Int) {
        var pending = requests[...]
        while !pending.isEmpty {
            var deferred: [TogetherRequest] = []
            var used: Set<ObjectIdentifier> = []
            var inFlight: [InlineFlight] = []
            for request in pending {
                let core = request.connection.core
                guard used.insert(ObjectIdentifier(core)).inserted else {
                    deferred.append(request)
                    continue
                }
                guard let (session, id) = core.borrowInline(caller: caller) else {
                    _ = core.submit(request.command, caller: caller, completion: request.completion)
                    continue
                }
                let queuedAt = ContinuousClock.now
                switch session.write(request.command) {
                case .ended(let outcome):
                    _ = core.finishInline(
                        outcome, id: id, on: session, queuedAt: queuedAt, completion: request.completion)
                case .written(let writtenAt):
                    inFlight.append(
                        InlineFlight(
                            core: core, session: session, id: id, queuedAt: queuedAt, writtenAt: writtenAt,
                            giveUpAt: writtenAt.advanced(by: core.configuration.inlineReplyWait),
                            completion: request.completion))
                }
            }
            while !inFlight.isEmpty {
                let now = ContinuousClock.now
                inFlight.removeAll { flight in
                    let outcome =
                        flight.session.poll(writtenAt: flight.writtenAt)
                        ?? (now >= flight.giveUpAt ? .unfinished(unwritten: [], writtenAt: flight.writtenAt) : nil)
                    guard let outcome else { return false }
                    _ = flight.core.finishInline(
                        outcome, id: flight.id, on: flight.session, queuedAt: flight.queuedAt,
                        completion: flight.completion)
                    return true
                }
                if !inFlight.isEmpty { sched_yield() }
            }
            pending = deferred[...]
        }
    }

    /// A request written inline by ``send(together:caller:)`` whose reply is awaited.
    private struct InlineFlight {
        var core: ConnectionCore
        var session: SocketSession
        var id: UInt64
        var queuedAt: ContinuousClock.Instant
        var writtenAt: ContinuousClock.Instant
        var giveUpAt: ContinuousClock.Instant
        var completion: @Sendable (Result<RESPValue, any Error>) -> Void
    }
}

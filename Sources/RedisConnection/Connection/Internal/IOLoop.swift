#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The I/O thread of one connection: connects, writes queued requests together, reads and matches
/// replies in FIFO order, enforces deadlines, reconnects with backoff, and sends keep-alive pings.
///
/// Callers queue through ``ConnectionCore`` and are completed from here, except while the connection is
/// idle: the loop then parks its socket (`IOLoop+Parking.swift`) and one caller at a time may borrow it
/// for an inline exchange bounded by microseconds, never a blocking wait in the kernel.
///
/// `@unchecked Sendable` is sound: the loop is confined to one thread. `start` creates it and moves it into
/// the I/O thread's closure (whose `@Sendable` type is the only reason for the conformance), keeping no other
/// reference. What callers share with it lives in `core`, behind its lock, and in `session`, which one thread
/// owns at a time (``SocketSession``).
final class IOLoop: @unchecked Sendable {

    struct InFlight {
        var id: UInt64
        var end: Int  // offset in `output` just past this request's bytes
        var queuedAt: ContinuousClock.Instant
        var writtenAt: ContinuousClock.Instant?
        var isInternal: Bool
    }

    let core: ConnectionCore
    var configuration: RedisConnection.Configuration { core.configuration }
    /// The connection's byte stream while the loop holds it.
    var socket: Transport?
    var decoder: RESPDecoder
    var output: [UInt8] = []
    var written = 0
    var inFlight: [InFlight] = []
    var head = 0
    var firstUnwritten = 0
    var lastActivity = ContinuousClock.now
    var readChunk = [UInt8](repeating: 0, count: 64 << 10)
    var spareOutbox: [UInt8] = []  // swapped with the callers' outbox in `takeQueued`
    var spareQueued: [ConnectionCore.Queued] = []
    var nextInternalID: UInt64 = 1 << 63
    var writes = 0  // added to the statistics in `takeQueued`, which holds the lock anyway
    /// The holder this loop lends its socket and decoder in while the connection is idle.
    let session: SocketSession
    /// The socket is parked or with a caller (`socket` is `nil` then but the connection is up).
    var isSessionAway = false
    /// The parked socket's descriptor, polled for a hang-up while the loop is parked.
    var parkedDescriptor: Int32 = -1
    /// The parked socket reported a hang-up: service it rather than park it again.
    var sawHangUp = false
    /// Requests taken since the connection was last idle: more than one means callers overlap, and the
    /// loop then keeps the socket (pipelining serves them better than one borrower at a time).
    var requestsSinceIdle = 0

    init(core: ConnectionCore) {
        self.core = core
        decoder = RESPDecoder(limits: core.configuration.decoderLimits)
        session = SocketSession(limits: core.configuration.decoderLimits)
    }

    /// Starts the I/O thread.
    static func start(core: ConnectionCore) {
        let loop = IOLoop(core: core)
        DetachedThread.start(name: "strata.redis-io") { loop.run() }
    }

    // MARK: - The loop

    func run() {
        while takeQueued() {
            if isSessionAway {
                // A caller holds the socket for an inline exchange; it wakes this thread when it gives it back.
                waitForWake(until: nil)
                continue
            }
            if socket == nil {
                connectIfDue()
                if socket == nil {
                    waitForWake(until: core.withState { $0.breaker.nextAttempt }.map { core.origin + $0 })
                    continue
                }
            }
            if park() {
                waitWhileParked()
                continue
            }
            serviceSocket()
        }
        while isSessionAway {
            // Closing while a caller holds the socket: it gives it back within its inline wait.
            waitForWake(until: nil)
            _ = takeQueued()
        }
        drop(ConnectionError(.connectionClosed, "the connection was closed"), countsAsFailure: false)
        if configuration.tls != nil { TLSContext.releaseThreadState() }
        core.terminated()
    }

    /// Moves requests callers queued into `output` and the FIFO; `false` when the connection is closing.
    private func takeQueued() -> Bool {
        core.wakePipe.drain()
        var handoff: ConnectionCore.Handoff?
        var reclaimed = false
        // Swap the callers' buffers with this thread's empty spares rather than copying them out: both
        // sides stay uniquely referenced, so neither reallocates on the next request.
        let closing = core.withState { state in
            state.wakePending = false
            state.statistics.writes += writes
            writes = 0
            if isSessionAway {
                if let given = state.handoff {
                    handoff = given
                    state.handoff = nil
                    state.ioWantsSession = false
                } else if state.parked != nil {
                    state.parked = nil
                    reclaimed = true
                } else {
                    // A caller holds the socket: what is queued stays queued, behind its request, until it
                    // gives the socket back (it does so at once when it sees this flag or the queue).
                    state.ioWantsSession = true
                    return state.isClosing
                }
            }
            swap(&state.outbox, &spareOutbox)
            swap(&state.queued, &spareQueued)
            return state.isClosing
        }
        if let handoff {
            adopt(handoff)
        } else if reclaimed {
            reclaimSession()
        }
        requestsSinceIdle += spareQueued.count + (handoff?.request == nil ? 0 : 1)
        let base = output.count
        output.append(contentsOf: spareOutbox)
        for request in spareQueued {
            inFlight.append(
                InFlight(
                    id: request.id, end: base + request.end, queuedAt: request.queuedAt, writtenAt: nil,
                    isInternal: false))
        }
        spareOutbox.removeAll(keepingCapacity: spareOutbox.capacity <= 1 << 20)
        spareQueued.removeAll(keepingCapacity: true)
        return !closing
    }

    /// The requests written or queued and not yet answered.
    var pendingCount: Int { inFlight.count - head }

    /// Connects when a request waits and the breaker is closed, or when the backoff says a background
    /// attempt (a probe) is due.
    private func connectIfDue() {
        let (breaker, connects) = core.withState { ($0.breaker, $0.statistics.connects) }
        let now = core.now()
        let demanded = pendingCount > 0 && !breaker.isOpen
        let due = breaker.consecutiveFailures > 0 && breaker.allowsAttempt(at: now)
        guard demanded || due else {
            // Requests queued just before the breaker opened fail now, not at the next probe.
            if pendingCount > 0 {
                drop(
                    ConnectionError(.unavailable, "the Redis server is unavailable (circuit breaker open)"),
                    countsAsFailure: false)
            }
            return
        }
        do throws(ConnectionError) {
            socket = try open()
            lastActivity = .now
            core.withState { state in
                state.breaker.recordSuccess()
                state.state = .connected
                state.lastConnectedAt = .now
                state.statistics.connects += 1
                if connects > 0 { state.statistics.reconnects += 1 }
            }
        } catch {
            drop(error, countsAsFailure: true)
        }
    }

    /// Blocks on the wake pipe until a caller wakes the loop or `deadline` passes.
    private func waitForWake(until deadline: ContinuousClock.Instant?) {
        var entry = pollfd(fd: core.wakePipe.readEnd, events: Int16(POLLIN), revents: 0)
        _ = poll(&entry, 1, deadline.map(Socket.milliseconds(until:)) ?? -1)
    }

    // MARK: - Failure

    /// Closes the socket and fails everything in flight with `error`; a failure also feeds the breaker.
    func drop(_ error: ConnectionError, countsAsFailure: Bool) {
        socket?.close()
        socket = nil
        decoder = RESPDecoder(limits: configuration.decoderLimits)
        let failed = inFlight[head...].filter { !$0.isInternal }.map {
            ($0.id, Result<RESPValue, any Error>.failure(error))
        }
        inFlight.removeAll()
        head = 0
        firstUnwritten = 0
        output.removeAll()
        written = 0
        if countsAsFailure {
            let now = core.now()
            core.withState { state in
                let wasOpen = state.breaker.isOpen
                state.breaker.recordFailure(at: now, randomFraction: Double.random(in: 0...1))
                if error.code == .deadlineExceeded { state.statistics.deadlineMisses += 1 }
                if error == .clusterNodeRefused { state.statistics.clusterNodeRefusals += 1 }
                if state.breaker.isOpen, !wasOpen { state.statistics.breakerOpenings += 1 }
                state.state = state.breaker.isOpen ? .unavailable : .disconnected
            }
        }
        core.complete(failed)
    }
}

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

// Lending the idle connection to callers (ConnectionCore+Inline.swift). The loop parks its socket and
// decoder in `session` when nothing is in flight or queued, then sleeps on the wake pipe (and on a hang-up
// of the socket) until a keep-alive is due; a caller that finds it parked writes and reads on its own
// thread. The loop takes the socket back whenever it wakes, or adopts what a caller gave back.
extension IOLoop {
    /// Parks the idle connection; `false` when it is not idle, inline exchanges are off, a keep-alive is
    /// due, or the requests since the connection was last idle overlapped (the loop then services the
    /// socket itself, and parks after the next time a lone request was all there was).
    func park() -> Bool {
        guard pendingCount == 0, output.isEmpty else { return false }
        let overlapped = requestsSinceIdle > 1
        requestsSinceIdle = 0
        defer { sawHangUp = false }
        guard !sawHangUp, !overlapped, let socket, configuration.inlineReplyWait > .zero,
            configuration.pushHandler == nil,
            ContinuousClock.now < lastActivity.advanced(by: configuration.keepAliveInterval)
        else { return false }
        inFlight.removeAll(keepingCapacity: true)
        head = 0
        firstUnwritten = 0
        written = 0
        session.socket = socket
        session.lastActivity = lastActivity
        swap(&decoder, &session.decoder)
        let parked = core.withState { state in
            guard state.queued.isEmpty, !state.isClosing else { return false }
            state.parked = session
            state.inlineCaller = 0
            return true
        }
        guard parked else {
            swap(&decoder, &session.decoder)
            session.socket = nil
            return false
        }
        self.socket = nil
        isSessionAway = true
        parkedDescriptor = socket.descriptor
        return true
    }

    /// Sleeps until a caller wakes the loop, the parked socket hangs up, or a keep-alive is due.
    func waitWhileParked() {
        // While parked the loop never reads the socket: the caller that borrows it does. It only listens
        // for a hang-up (POLLRDHUP on Linux; POLLHUP and POLLERR are always reported), so a server that
        // closes an idle connection is noticed at once, as before parking existed.
        var entries = (
            pollfd(fd: core.wakePipe.readEnd, events: Int16(POLLIN), revents: 0),
            pollfd(fd: parkedDescriptor, events: Int16(hangUpEvent), revents: 0)
        )
        let keepAliveAt = lastActivity.advanced(by: configuration.keepAliveInterval)
        let timeout = Socket.milliseconds(until: keepAliveAt)
        _ = withUnsafeMutablePointer(to: &entries) {
            $0.withMemoryRebound(to: pollfd.self, capacity: 2) { poll($0, 2, timeout) }
        }
        // Hung up: the next round takes the socket back and services it instead of parking it again, so the
        // end of stream is read and the connection dropped (a caller holding it sees the hang-up itself).
        sawHangUp = entries.1.revents != 0
    }

    /// Takes the parked socket and decoder back (the caller of this has cleared `parked` under the lock).
    func reclaimSession() {
        socket = session.socket
        session.socket = nil
        swap(&decoder, &session.decoder)
        lastActivity = max(lastActivity, session.lastActivity)
        isSessionAway = false
        parkedDescriptor = -1
    }

    /// Takes back a socket a caller gave back, with its unfinished request first in the FIFO (it went on
    /// the wire before anything queued since), and drops the connection if the exchange failed.
    func adopt(_ handoff: ConnectionCore.Handoff) {
        reclaimSession()
        if let request = handoff.request {
            output.append(contentsOf: handoff.unwritten)
            inFlight.append(
                InFlight(
                    id: request.id, end: output.count, queuedAt: request.queuedAt, writtenAt: handoff.writtenAt,
                    isInternal: false))
            if handoff.writtenAt != nil { firstUnwritten = inFlight.count }
        }
        if let failure = handoff.failure {
            drop(failure, countsAsFailure: true)
        }
    }
}

#if os(Linux)
// POLLRDHUP (the peer shut down its side) is not exported by the Glibc module; its value is 0x2000
// on every Linux architecture (include/uapi/asm-generic/poll.h).
private let hangUpEvent: Int32 = 0x2000
#else
private let hangUpEvent: Int32 = 0
#endif

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

extension IOLoop {
    /// One round on a connected socket: enforce deadlines, queue a keep-alive, write, poll, read.
    func serviceSocket() {
        guard let socket else { return }
        // Write first: requests queued while the connection was being set up are judged by their write
        // deadline only once the socket had a chance to take them.
        guard writeAvailable(socket) else { return }
        var now = ContinuousClock.now
        if let deadline = nextDeadline(), deadline <= now {
            // Read what already arrived before judging: a thread that was not scheduled for a while (a loaded
            // machine) must not fail requests whose replies are waiting in the socket buffer.
            readAvailable(socket)
            guard self.socket != nil else { return }
            now = ContinuousClock.now
            if let deadline = nextDeadline(), deadline <= now {
                drop(ConnectionError(.deadlineExceeded, deadlineMessage()), countsAsFailure: true)
                return
            }
        }
        if pendingCount == 0, lastActivity.advanced(by: configuration.keepAliveInterval) <= now {
            queueKeepAlive()
            guard writeAvailable(socket) else { return }
        }
        // Two pollfds in a homogeneous tuple (contiguous, like a C array) and no array of deadlines: this
        // runs once per request, and heap allocations here showed in the sequential-GET profile.
        var entries = (
            pollfd(
                fd: socket.descriptor, events: Int16(written < output.count ? POLLIN | POLLOUT : POLLIN), revents: 0),
            pollfd(fd: core.wakePipe.readEnd, events: Int16(POLLIN), revents: 0)
        )
        let keepAliveAt = pendingCount == 0 ? lastActivity.advanced(by: configuration.keepAliveInterval) : nil
        let deadline = nextDeadline()
        let wakeAt = keepAliveAt.map { keepAliveAt in deadline.map { min($0, keepAliveAt) } ?? keepAliveAt } ?? deadline
        let timeout = wakeAt.map(Socket.milliseconds(until:)) ?? -1
        // Bytes the transport already holds (TLS: the rest of a decrypted record) are not seen by poll(2).
        if socket.hasBufferedInput {
            readAvailable(socket)
            return
        }
        let ready = withUnsafeMutablePointer(to: &entries) {
            $0.withMemoryRebound(to: pollfd.self, capacity: 2) { poll($0, 2, timeout) }
        }
        guard ready > 0, entries.0.revents != 0 else { return }
        readAvailable(socket)
    }

    /// The earliest deadline in flight: the oldest written request's read deadline, or the oldest
    /// unwritten request's write deadline.
    private func nextDeadline() -> ContinuousClock.Instant? {
        var earliest: ContinuousClock.Instant?
        if head < inFlight.count, let writtenAt = inFlight[head].writtenAt {
            earliest = writtenAt.advanced(by: configuration.readTimeout)
        }
        if firstUnwritten < inFlight.count {
            let writeDeadline = inFlight[firstUnwritten].queuedAt.advanced(by: configuration.writeTimeout)
            earliest = min(earliest ?? writeDeadline, writeDeadline)
        }
        return earliest
    }

    private func deadlineMessage() -> String {
        if head < inFlight.count, inFlight[head].writtenAt != nil {
            return "no reply within the read deadline of \(configuration.readTimeout)"
        }
        return "a request was not written within the write deadline of \(configuration.writeTimeout)"
    }

    private func queueKeepAlive() {
        RESPEncoder.encode(RESPCommand("PING"), into: &output)
        inFlight.append(
            InFlight(id: nextInternalID, end: output.count, queuedAt: .now, writtenAt: nil, isInternal: true))
        nextInternalID += 1
        core.withState { $0.statistics.keepAlivePings += 1 }
    }

    /// Writes what the kernel takes; `false` when the connection was dropped.
    private func writeAvailable(_ socket: Transport) -> Bool {
        while written < output.count {
            let progress = output.withUnsafeBytes { socket.write(UnsafeRawBufferPointer(rebasing: $0[written...])) }
            switch progress {
            case .bytes(let count):
                written += count
                writes += 1
            case .wouldBlock: return true
            case .endOfStream, .failed:
                drop(ConnectionError(.connectionClosed, "the connection failed while writing"), countsAsFailure: true)
                return false
            }
            let now = ContinuousClock.now
            while firstUnwritten < inFlight.count, inFlight[firstUnwritten].end <= written {
                inFlight[firstUnwritten].writtenAt = now
                firstUnwritten += 1
            }
        }
        if written == output.count, firstUnwritten == inFlight.count {
            // Everything is on the wire: start the next batch at offset 0.
            output.removeAll(keepingCapacity: output.capacity <= 1 << 20)
            written = 0
        }
        return true
    }

    /// Reads what is there, decodes every whole reply and completes its request in FIFO order.
    private func readAvailable(_ socket: Transport) {
        var outcomes: [(UInt64, Result<RESPValue, any Error>)] = []
        defer { core.complete(outcomes) }
        while true {
            let progress = readChunk.withUnsafeMutableBytes { socket.read(into: $0) }
            switch progress {
            case .bytes(let count):
                lastActivity = .now
                decoder.append(readChunk[0..<count])
                do throws(ConnectionError) {
                    while let reply = try decoder.next() {
                        if case .push = reply {
                            configuration.pushHandler?(reply)
                            continue
                        }
                        guard head < inFlight.count, inFlight[head].writtenAt != nil else {
                            throw ConnectionError(.protocolViolation, "a reply arrived with no request waiting")
                        }
                        let request = inFlight[head]
                        head += 1
                        if !request.isInternal { outcomes.append((request.id, Self.result(of: reply))) }
                    }
                } catch {
                    core.complete(outcomes)
                    outcomes = []
                    drop(error, countsAsFailure: true)
                    return
                }
                compactFIFO()
                if count < readChunk.count { return }
            case .wouldBlock:
                return
            case .endOfStream, .failed:
                core.complete(outcomes)
                outcomes = []
                drop(ConnectionError(.connectionClosed, "the server closed the connection"), countsAsFailure: true)
                return
            }
        }
    }

    private func compactFIFO() {
        if head == inFlight.count {
            inFlight.removeAll(keepingCapacity: true)
            head = 0
            firstUnwritten = 0
        } else if head > 1024, head * 2 > inFlight.count {
            inFlight.removeFirst(head)
            firstUnwritten -= head
            head = 0
        }
    }

    /// A reply as the caller sees it: error replies become typed errors.
    static func result(of reply: RESPValue) -> Result<RESPValue, any Error> {
        if let message = reply.errorMessage { return .failure(ConnectionError.reply(message)) }
        return .success(reply)
    }
}

import RedisConnection

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

/// The dedicated RESP3 connection that receives the server's client-tracking messages for one
/// namespace: `CLIENT TRACKING on BCAST PREFIX strata:v2:<namespace>: NOLOOP`, then a read loop on a
/// thread of its own.
///
/// - **Events.** ``Event/enabled`` once tracking is on (after every connect), ``Event/push(_:)`` for each
///   push the server sends, ``Event/lost(_:)`` when the connection fails or cannot be made. They are
///   delivered on the listener's thread, one at a time, in the order they happened.
/// - **Keep-alive.** After ``Settings/keepAliveInterval`` without a byte from the server it sends `PING`;
///   no byte within ``Settings/readTimeout`` after that is a lost connection. A peer that died without
///   closing is noticed within the interval plus the deadline.
/// - **Reconnects** wait as the data connection does (``CircuitBreaker``'s backoff with full jitter).
///
/// `NOLOOP` hides only this connection's own writes, and it writes none: writes made through the tier's
/// data connection come back as pushes like anyone else's.
///
/// Thread safety: ``start(settings:onEvent:)`` and ``stop()`` may be called from any thread; everything
/// else runs on the listener's thread.
final class TrackingListener: Sendable {
    /// Where to connect and how long to wait.
    struct Settings: Sendable {
        var host: String
        var port: Int
        var username: String?
        var password: String?
        var connectTimeout: Duration
        var readTimeout: Duration
        var writeTimeout: Duration
        var keepAliveInterval: Duration
        var breaker: CircuitBreaker
        var decoderLimits: RESPDecoder.Limits
        /// The key prefix tracked, `strata:v2:<namespace>:`.
        var prefix: [UInt8]
        /// Addresses tried in order after `host`:`port`, as the data connection does.
        var fallbackAddresses: [RedisCacheConfiguration.Address] = []
        /// The data connection's TLS context, or `nil` for plain TCP.
        var tls: TLSContext?
        /// Sent before tracking is turned on, its reply (an error included: a cluster node that does not serve
        /// the key answers `MOVED`) ignored: the namespace's epoch counter is created here, so that its
        /// creation is not reported back as an "everything" to the process that made it.
        var prelude: RESPCommand?
    }

    /// What the listener reports.
    enum Event: Sendable {
        /// Tracking is on, on a fresh connection.
        case enabled
        /// A push from the server.
        case push(RESPValue)
        /// The connection failed, or a connect attempt did; changes may be missed until ``enabled``.
        case lost(ConnectionError)
    }

    let settings: Settings
    private let wakePipe: WakePipe
    private let isStopping = Locked(false)
    private let exit = Locked((hasExited: false, waiters: [CheckedContinuation<Void, Never>]()))

    private init(settings: Settings, wakePipe: WakePipe) {
        self.settings = settings
        self.wakePipe = wakePipe
    }

    /// Starts a listener on a thread of its own; `nil` when the process has no descriptor left for its
    /// wake-up pipe.
    static func start(settings: Settings, onEvent: @escaping @Sendable (Event) -> Void) -> TrackingListener? {
        guard let wakePipe = WakePipe() else { return nil }
        let listener = TrackingListener(settings: settings, wakePipe: wakePipe)
        DetachedThread.start(name: "strata.redis-tracking") { listener.run(onEvent) }
        return listener
    }

    /// Asks the thread to close its connection and exit; returns at once.
    func stop() {
        isStopping.withLock { $0 = true }
        wakePipe.wake()
    }

    /// Returns once the thread has closed its socket and exited (after ``stop()``).
    func waitForExit() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let exited = exit.withLock { exit in
                if !exit.hasExited { exit.waiters.append(continuation) }
                return exit.hasExited
            }
            if exited { continuation.resume() }
        }
    }

    /// Whether the thread has exited.
    var hasExited: Bool { exit.withLock { $0.hasExited } }

    private var stopping: Bool { isStopping.withLock { $0 } }

    // MARK: - The thread

    private func run(_ onEvent: @Sendable (Event) -> Void) {
        defer {
            if settings.tls != nil { TLSContext.releaseThreadState() }
            let waiters = exit.withLock { exit in
                exit.hasExited = true
                defer { exit.waiters = [] }
                return exit.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        var breaker = settings.breaker
        let origin = ContinuousClock.now
        while !stopping {
            var socket: Transport?
            do throws(ConnectionError) {
                var decoder = RESPDecoder(limits: settings.decoderLimits)
                let opened = try open(&decoder, onEvent)
                socket = opened
                breaker.recordSuccess()
                onEvent(.enabled)
                try serve(opened, &decoder, onEvent)
                opened.close()
                return
            } catch {
                socket?.close()
                if stopping { return }
                onEvent(.lost(error))
                let wait = breaker.recordFailure(at: origin.duration(to: .now), randomFraction: .random(in: 0...1))
                waitForWake(until: .now.advanced(by: wait))
            }
        }
    }

    /// Connects to the first address that accepts and completes the handshake (the first failure is the
    /// one thrown when none does).
    private func open(
        _ decoder: inout RESPDecoder, _ onEvent: @Sendable (Event) -> Void
    ) throws(ConnectionError) -> Transport {
        var firstFailure: ConnectionError?
        let addresses =
            [RedisCacheConfiguration.Address(host: settings.host, port: settings.port)] + settings.fallbackAddresses
        for address in addresses {
            do throws(ConnectionError) {
                decoder = RESPDecoder(limits: settings.decoderLimits)
                return try open(address, &decoder, onEvent)
            } catch {
                if firstFailure == nil { firstFailure = error }
            }
        }
        throw firstFailure ?? ConnectionError(.connectFailed, "no address to connect to")
    }

    /// Connects to `address`, runs `HELLO 3` and turns tracking on.
    private func open(
        _ address: RedisCacheConfiguration.Address, _ decoder: inout RESPDecoder,
        _ onEvent: @Sendable (Event) -> Void
    ) throws(ConnectionError) -> Transport {
        let socket = try Transport.connect(
            host: address.host, port: address.port, tls: settings.tls,
            deadline: .now.advanced(by: settings.connectTimeout))
        do throws(ConnectionError) {
            var hello = RESPCommand("HELLO", "3")
            if let password = settings.password {
                hello.append("AUTH")
                hello.append(settings.username ?? "default")
                hello.append(password)
            }
            hello.append("SETNAME")
            hello.append("strata-tracking")
            let greeting = try exchange(hello, on: socket, &decoder, onEvent)
            guard case .map = greeting else {
                // Pushes on the connection that asks for them need RESP3 (Redis 6 or later).
                throw ConnectionError(
                    .protocolViolation, "the server did not accept HELLO 3 (\(greeting)); tracking needs RESP3")
            }
            if let prelude = settings.prelude {
                do {
                    _ = try exchange(prelude, on: socket, &decoder, onEvent)
                } catch
                    where error.code == .serverError || error.code == .moved || error.code == .ask
                    || error.code == .readOnly || error.code == .outOfMemory || error.code == .authenticationFailed
                {
                    // Not created here; the first write creates it, as before.
                }
            }
            var tracking = RESPCommand("CLIENT", "TRACKING", "on", "BCAST", "PREFIX")
            tracking.append(settings.prefix)
            tracking.append("NOLOOP")
            let reply = try exchange(tracking, on: socket, &decoder, onEvent)
            guard reply == .simpleString("OK") else {
                throw ConnectionError(.protocolViolation, "CLIENT TRACKING answered \(reply)")
            }
            return socket
        } catch {
            socket.close()
            throw error
        }
    }

    /// Reads pushes until the connection fails (throws) or the listener stops (returns).
    private func serve(
        _ socket: Transport, _ decoder: inout RESPDecoder, _ onEvent: @Sendable (Event) -> Void
    )
        throws(ConnectionError)
    {
        var lastByte = ContinuousClock.now
        var pingSentAt: ContinuousClock.Instant?
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while !stopping {
            let now = ContinuousClock.now
            if let pingSentAt, now >= pingSentAt.advanced(by: settings.readTimeout) {
                throw ConnectionError(.deadlineExceeded, "the tracking connection did not answer PING in time")
            }
            if pingSentAt == nil, now >= lastByte.advanced(by: settings.keepAliveInterval) {
                try write(RESPEncoder.encode(RESPCommand("PING")), to: socket)
                pingSentAt = now
            }
            let wakeAt =
                pingSentAt?.advanced(by: settings.readTimeout) ?? lastByte.advanced(by: settings.keepAliveInterval)
            var entries = [
                pollfd(fd: socket.descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: wakePipe.readEnd, events: Int16(POLLIN), revents: 0),
            ]
            // Bytes the transport already holds (TLS: the rest of a record the handshake read) are read at once.
            let readable =
                socket.hasBufferedInput
                || (poll(&entries, 2, Socket.milliseconds(until: wakeAt)) > 0 && entries[0].revents != 0)
            guard readable else { continue }
            reading: while true {
                switch chunk.withUnsafeMutableBytes({ socket.read(into: $0) }) {
                case .bytes(let count):
                    lastByte = .now
                    decoder.append(chunk[0..<count])
                    while let value = try decoder.next() {
                        if case .push = value {
                            onEvent(.push(value))
                        } else if let message = value.errorMessage {
                            throw ConnectionError.reply(message)
                        } else {
                            pingSentAt = nil  // the PONG
                        }
                    }
                    if count < chunk.count { break reading }
                case .wouldBlock:
                    break reading
                case .endOfStream, .failed:
                    throw ConnectionError(.connectionClosed, "the server closed the tracking connection")
                }
            }
        }
    }

    /// Sends one command and returns its reply, within the write and read deadlines; pushes that come
    /// first are reported.
    private func exchange(
        _ command: RESPCommand, on socket: Transport, _ decoder: inout RESPDecoder, _ onEvent: @Sendable (Event) -> Void
    ) throws(ConnectionError) -> RESPValue {
        try write(RESPEncoder.encode(command), to: socket)
        let deadline = ContinuousClock.now.advanced(by: settings.readTimeout)
        var chunk = [UInt8](repeating: 0, count: 4 << 10)
        while true {
            if let reply = try decoder.next() {
                if case .push = reply {
                    onEvent(.push(reply))
                    continue
                }
                if let message = reply.errorMessage { throw ConnectionError.reply(message) }
                return reply
            }
            switch chunk.withUnsafeMutableBytes({ socket.read(into: $0) }) {
            case .bytes(let count):
                decoder.append(chunk[0..<count])
            case .wouldBlock:
                guard !stopping, socket.wait(forWriting: false, until: deadline) else {
                    throw ConnectionError(.deadlineExceeded, "the tracking connection's handshake missed its deadline")
                }
            case .endOfStream, .failed:
                throw ConnectionError(
                    .connectionClosed, "the server closed the tracking connection during its handshake")
            }
        }
    }

    private func write(_ bytes: [UInt8], to socket: Transport) throws(ConnectionError) {
        var sent = 0
        let deadline = ContinuousClock.now.advanced(by: settings.writeTimeout)
        while sent < bytes.count {
            switch bytes.withUnsafeBytes({ socket.write(UnsafeRawBufferPointer(rebasing: $0[sent...])) }) {
            case .bytes(let count):
                sent += count
            case .wouldBlock:
                guard socket.wait(forWriting: true, until: deadline) else {
                    throw ConnectionError(.deadlineExceeded, "the tracking connection missed its write deadline")
                }
            case .endOfStream, .failed:
                throw ConnectionError(.connectionClosed, "the tracking connection failed while writing")
            }
        }
    }

    /// Blocks on the wake pipe until ``stop()`` or `deadline`.
    private func waitForWake(until deadline: ContinuousClock.Instant) {
        var entry = pollfd(fd: wakePipe.readEnd, events: Int16(POLLIN), revents: 0)
        _ = poll(&entry, 1, Socket.milliseconds(until: deadline))
    }
}

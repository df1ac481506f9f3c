import Foundation
import StrataTestSupport

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// A TCP proxy on 127.0.0.1 in front of a test server that can pass, delay, blackhole or cut traffic.
///
/// One thread polls the listener and every client/upstream pair every 10 ms at most. Only loopback.
final class FaultProxy: @unchecked Sendable {
    // @unchecked Sendable is sound: `mode` and `stopped` are read and written only under `lock`; the
    // descriptors are used only by the proxy thread after `init` returns.

    /// What the proxy does with traffic.
    enum Mode: Equatable {
        /// Forward both ways.
        case pass
        /// Hold each chunk from the server this long before forwarding it.
        case delay(Duration)
        /// Swallow everything from the client; the server never hears it.
        case blackhole
        /// Forward this many more bytes from the server, then close both sides and go back to ``pass``
        /// (so a reconnect that races the test's next step is not cut again).
        case cut(afterServerBytes: Int)
    }

    /// The port clients connect to.
    let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let lock = NSLock()
    private var modeValue = Mode.pass
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)
    private let records: Bool
    private var recordedValue: [UInt8] = []

    /// Every byte the proxy received, both directions interleaved as they came; empty unless made with
    /// `records: true`. For tests that look for plaintext on the wire.
    var recorded: [UInt8] { lock.withLock { recordedValue } }

    var mode: Mode {
        get { lock.withLock { modeValue } }
        set { lock.withLock { modeValue = newValue } }
    }

    init(upstreamPort: Int, records: Bool = false) throws {
        self.upstreamPort = upstreamPort
        self.records = records
        // A port no other test of this process had: a finished test's client may still reconnect to its own.
        let (listener, port) = try LoopbackPorts.bindUnclaimed(backlog: 16)
        self.listener = listener
        self.port = port
        let thread = Thread { [self] in run() }
        thread.start()
    }

    /// Stops the thread and closes every descriptor.
    func stop() {
        let already = lock.withLock {
            defer { stopped = true }
            return stopped
        }
        if !already { finished.wait() }
    }

    deinit { stop() }

    private struct Pair {
        var client: Int32
        var upstream: Int32
    }

    private func run() {
        var pairs: [Pair] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while !lock.withLock({ stopped }) {
            var entries = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
            for pair in pairs {
                entries.append(pollfd(fd: pair.client, events: Int16(POLLIN), revents: 0))
                entries.append(pollfd(fd: pair.upstream, events: Int16(POLLIN), revents: 0))
            }
            guard poll(&entries, nfds_t(entries.count), 10) > 0 else { continue }
            var closed: Set<Int> = []
            for (index, pair) in pairs.enumerated() {
                let fromClient = entries[1 + 2 * index].revents != 0
                let fromServer = entries[2 + 2 * index].revents != 0
                if fromClient, !forward(from: pair.client, to: pair.upstream, chunk: &chunk, fromServer: false) {
                    closed.insert(index)
                }
                if fromServer, !forward(from: pair.upstream, to: pair.client, chunk: &chunk, fromServer: true) {
                    closed.insert(index)
                }
            }
            for index in closed.sorted(by: >) {
                close(pairs[index].client)
                close(pairs[index].upstream)
                pairs.remove(at: index)
            }
            if entries[0].revents != 0 {
                let client = accept(listener, nil, nil)
                if client >= 0 {
                    let upstream = socket(AF_INET, FreePort.streamType, 0)
                    var address = FreePort.loopback(port: upstreamPort)
                    let connected = withUnsafePointer(to: &address) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                        }
                    }
                    if connected {
                        pairs.append(Pair(client: client, upstream: upstream))
                    } else {
                        close(client)
                        close(upstream)
                    }
                }
            }
        }
        for pair in pairs {
            close(pair.client)
            close(pair.upstream)
        }
        close(listener)
        finished.signal()
    }

    /// Moves one chunk; `false` when the pair should close.
    private func forward(from source: Int32, to destination: Int32, chunk: inout [UInt8], fromServer: Bool) -> Bool {
        let count = recv(source, &chunk, chunk.count, 0)
        guard count > 0 else { return false }
        if records { lock.withLock { recordedValue.append(contentsOf: chunk[0..<count]) } }
        var length = count
        let mode0 = mode
        switch mode0 {
        case .pass: break
        case .blackhole: if !fromServer { return true }
        case .delay(let duration):
            if fromServer {
                let (seconds, attoseconds) = duration.components
                usleep(UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
            }
        case .cut(let left):
            if fromServer {
                length = min(count, left)
                mode = left == length ? .pass : .cut(afterServerBytes: left - length)
                if length == 0 { return false }
            }
        }
        var sent = 0
        while sent < length {
            let wrote = chunk.withUnsafeBytes {
                send(destination, $0.baseAddress! + sent, length - sent, FreePort.sendFlags)
            }
            if wrote <= 0 { return false }
            sent += wrote
        }
        if case .cut(let left) = mode0, fromServer, left == length { return false }
        return true
    }
}

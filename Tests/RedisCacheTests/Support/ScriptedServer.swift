import Foundation
import RedisCache
import RedisConnection
import StrataTestSupport

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// A fake server on 127.0.0.1 that answers each command with bytes a test scripts: for handshakes a real
/// Redis 7 never gives (no `HELLO`), and for replies no real server sends (malformed, redirections).
///
/// A thread accepts, and one thread per client serves it with blocking sockets; all stop when the object
/// goes away.
final class ScriptedServer: @unchecked Sendable {
    // @unchecked Sendable is sound: `stopped` and `commands` are used only under `lock`; `listener` and
    // `script` are immutable; each client's thread owns its socket.

    /// The raw reply bytes for one command (its arguments as text).
    typealias Script = @Sendable ([String]) -> String

    let port: Int
    private let listener: Int32
    private let script: Script
    private let lock = NSLock()
    private var stopped = false
    private var received: [[String]] = []
    private var open = 0

    /// Every command received so far, in order.
    var commands: [[String]] { lock.withLock { received } }

    /// Client connections accepted and not yet ended: a client's close is seen here once this server reads
    /// its end of file (or hangs up itself).
    var openClients: Int { lock.withLock { open } }

    /// Returns once ``openClients`` is `count`, or `false` after `limit` (a generous bound, only for a
    /// failing test not to hang).
    func waitUntilOpenClients(_ count: Int, limit: Duration = .seconds(30)) async -> Bool {
        let start = ContinuousClock.now
        while openClients != count {
            guard ContinuousClock.now - start < limit else { return false }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return true
    }

    init(script: @escaping Script) throws {
        self.script = script
        // A port no other test of this process had: a finished test's client may still reconnect to its own.
        let (listener, port) = try LoopbackPorts.bindUnclaimed(backlog: 8)
        self.listener = listener
        self.port = port
        Thread { [self] in serve() }.start()
    }

    deinit {
        lock.withLock { stopped = true }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    private func serve() {
        while !isStopped {
            var entry = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 20) > 0 else { continue }
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            lock.withLock { open += 1 }
            // A thread per client: a client that keeps its connection open (a cluster client's map read
            // beside its node connection) must not hold up the next one
            Thread { [self] in
                converse(with: client)
                close(client)
                lock.withLock { open -= 1 }
            }.start()
        }
    }

    private func converse(with client: Int32) {
        var decoder = RESPDecoder()
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !isStopped {
            var entry = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 20) >= 0 else { return }
            guard entry.revents != 0 else { continue }
            let count = recv(client, &chunk, chunk.count, 0)
            guard count > 0 else { return }
            decoder.append(chunk[0..<count])
            while case .array(let parts)? = try? decoder.next() {
                let command = parts.map { $0.string ?? "" }
                lock.withLock { received.append(command) }
                let reply = Array(script(command).utf8)
                if reply.isEmpty { return }  // an empty script reply hangs up
                _ = reply.withUnsafeBytes { send(client, $0.baseAddress, $0.count, FreePort.sendFlags) }
            }
        }
    }
}

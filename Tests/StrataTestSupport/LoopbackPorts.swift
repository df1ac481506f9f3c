internal import CacheCore
import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// Loopback TCP ports handed to the servers, proxies and "nothing listens here" addresses of one test
/// process, each at most once.
///
/// The kernel hands a released port out again, and a client of a finished test may still be reconnecting
/// to its old server's port (its breaker probes, its tracking connection). If that port went to another
/// test's server, the old client would write into it: CI saw a round-trip test read back someone else's
/// value and a `maxmemory 1mb` server full before its first write. Every port any test target uses goes
/// through here, so no port serves two tests in one process.
public enum LoopbackPorts {
    // CacheCore's `Locked`, not `Synchronization.Mutex`, whose locking ThreadSanitizer does not see
    // (DESIGN.md): CI fails on any ThreadSanitizer warning.
    private static let handedOut = Locked<Set<Int>>([])

    /// Records `port` as used by the caller; `false` if some other part of this process already had it.
    public static func claim(_ port: Int) -> Bool {
        handedOut.withLock { $0.insert(port).inserted }
    }

    /// A TCP socket bound to 127.0.0.1 on a port never handed out before in this process, and that port.
    ///
    /// - Parameter backlog: Listen with this backlog, or `nil` to leave the socket bound only (the caller
    ///   closes it and passes the port to a child server).
    /// - Returns: The descriptor, which the caller owns, and the port.
    /// - Throws: `POSIXError` when no socket can be made or bound.
    public static func bindUnclaimed(backlog: Int32? = nil) throws -> (descriptor: Int32, port: Int) {
        // Refused sockets stay open until a fresh port is found, so the kernel cannot offer them again.
        var refused: [Int32] = []
        defer { refused.forEach { close($0) } }
        for _ in 0..<200 {
            let descriptor = socket(AF_INET, streamType, 0)
            guard descriptor >= 0 else { throw POSIXError(.EMFILE) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = 0
            address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(descriptor, $0, length) == 0 && getsockname(descriptor, $0, &length) == 0
                }
            }
            guard bound, backlog.map({ listen(descriptor, $0) == 0 }) ?? true else {
                close(descriptor)
                throw POSIXError(.EADDRINUSE)
            }
            let port = Int(UInt16(bigEndian: address.sin_port))
            if claim(port) { return (descriptor, port) }
            refused.append(descriptor)
        }
        throw POSIXError(.EADDRINUSE)
    }

    /// A port never handed out before in this process, free a moment ago; for a child server to bind.
    ///
    /// - Throws: `POSIXError` when no socket can be made or bound.
    public static func unclaimed() throws -> Int {
        let (descriptor, port) = try bindUnclaimed()
        close(descriptor)
        return port
    }

    #if canImport(Darwin)
    private static let streamType = SOCK_STREAM
    #else
    private static let streamType = Int32(SOCK_STREAM.rawValue)
    #endif
}

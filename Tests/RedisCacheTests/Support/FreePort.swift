import Foundation
import StrataTestSupport

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// Loopback port helpers for the Redis test harness.
enum FreePort {
    /// A port never handed out before in this test process (``LoopbackPorts``), free a moment ago.
    static func find() throws -> Int { try LoopbackPorts.unclaimed() }

    /// Whether a blocking connect to 127.0.0.1:`port` succeeds now.
    static func accepts(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, streamType, 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = loopback(port: port)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    /// The `process_id` that the Redis server listening on 127.0.0.1:`port` reports in `INFO server`, or
    /// `nil` when what listens there does not answer as a Redis server within a second (another test's
    /// fault proxy may hold the port a moment after it was found free).
    static func redisProcessID(port: Int) -> Int32? {
        let descriptor = socket(AF_INET, streamType, 0)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
        let request = Array("*2\r\n$4\r\nINFO\r\n$6\r\nserver\r\n".utf8)
        guard connected, send(descriptor, request, request.count, sendFlags) == request.count else { return nil }
        var reply: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while reply.count < 1 << 16 {
            let count = recv(descriptor, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            reply += chunk[0..<count]
            let text = String(decoding: reply, as: UTF8.self)
            // The whole bulk reply has arrived once it ends with the last line's CRLF and the bulk's own.
            guard text.hasSuffix("\r\n\r\n") else { continue }
            let line = text.split(whereSeparator: \.isNewline).first { $0.hasPrefix("process_id:") }
            return line.flatMap { Int32($0.dropFirst("process_id:".count).trimmingCharacters(in: .whitespaces)) }
        }
        return nil
    }

    static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return address
    }

    #if canImport(Darwin)
    static let streamType = SOCK_STREAM
    static let sendFlags: Int32 = 0
    #else
    static let streamType = Int32(SOCK_STREAM.rawValue)
    static let sendFlags = Int32(MSG_NOSIGNAL)
    #endif
}

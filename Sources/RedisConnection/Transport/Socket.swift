#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// The thin system-call layer of the Redis connection: one non-blocking TCP socket, with `EINTR` handled
/// once here. Nothing above this file calls the C socket API.
///
/// Not thread-safe: a socket is used by the one I/O thread of its connection.
package struct Socket {
    /// The file descriptor, open until ``close()``.
    package let descriptor: Int32

    /// What a read or write did.
    package enum Progress: Equatable {
        /// This many bytes moved.
        case bytes(Int)
        /// Nothing now; poll before trying again.
        case wouldBlock
        /// The peer closed its end (reads only).
        case endOfStream
        /// The call failed with this `errno`.
        case failed(Int32)
    }

    /// Connects to `host:port`, trying each address `getaddrinfo` returns, until `deadline`.
    ///
    /// Name resolution blocks the calling thread (the connection's I/O thread, never the cooperative pool).
    package static func connect(
        host: String, port: Int, deadline: ContinuousClock.Instant
    ) throws(ConnectionError) -> Socket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamType
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw ConnectionError(.connectFailed, "cannot resolve \(host):\(port) (getaddrinfo \(status))")
        }
        defer { freeaddrinfo(first) }
        var lastError = ConnectionError(.connectFailed, "no address for \(host):\(port)")
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let address = next {
            next = address.pointee.ai_next
            do {
                return try connect(to: address.pointee, deadline: deadline, name: "\(host):\(port)")
            } catch {
                lastError = error
                if error.code == .deadlineExceeded { break }
            }
        }
        throw lastError
    }

    private static func connect(
        to address: addrinfo, deadline: ContinuousClock.Instant, name: String
    )
        throws(ConnectionError) -> Socket
    {
        let descriptor = socket(address.ai_family, streamType, 0)
        guard descriptor >= 0 else { throw ConnectionError(.connectFailed, "socket(2) failed: \(errorText(errno))") }
        let socket = Socket(descriptor: descriptor)
        socket.configure()
        if systemConnect(descriptor, address.ai_addr, address.ai_addrlen) != 0 {
            let code = errno
            guard code == EINPROGRESS || code == EINTR else {
                socket.close()
                throw ConnectionError(.connectFailed, "connect to \(name) failed: \(errorText(code))")
            }
            guard socket.wait(forWriting: true, until: deadline) else {
                socket.close()
                throw ConnectionError(.deadlineExceeded, "connect to \(name) missed its deadline")
            }
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &failure, &length)
            guard failure == 0 else {
                socket.close()
                throw ConnectionError(.connectFailed, "connect to \(name) failed: \(errorText(failure))")
            }
        }
        return socket
    }

    /// Close-on-exec, non-blocking, no Nagle delay, and no SIGPIPE on Darwin (Linux passes MSG_NOSIGNAL).
    private func configure() {
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var on: Int32 = 1
        _ = setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
        #if !os(Linux)
        // Darwin has no MSG_NOSIGNAL; the socket option does the same (not seen by the Darwin type-check).
        _ = setsockopt(descriptor, SOL_SOCKET, SO_NOSIGPIPE, &on, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Reads what is available into `buffer`.
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> Progress {
        while true {
            let count = recv(descriptor, buffer.baseAddress, buffer.count, 0)
            if count > 0 { return .bytes(count) }
            if count == 0 { return .endOfStream }
            let code = errno
            if code == EINTR { continue }
            return code == EAGAIN || code == EWOULDBLOCK ? .wouldBlock : .failed(code)
        }
    }

    /// Writes what the kernel takes of `bytes`.
    package func write(_ bytes: UnsafeRawBufferPointer) -> Progress {
        while true {
            let count = send(descriptor, bytes.baseAddress, bytes.count, sendFlags)
            if count >= 0 { return .bytes(count) }
            let code = errno
            if code == EINTR { continue }
            return code == EAGAIN || code == EWOULDBLOCK ? .wouldBlock : .failed(code)
        }
    }

    /// Waits until the socket is writable (or readable) or `deadline` passes; `false` on the deadline.
    package func wait(forWriting: Bool, until deadline: ContinuousClock.Instant) -> Bool {
        var entry = pollfd(fd: descriptor, events: Int16(forWriting ? POLLOUT : POLLIN), revents: 0)
        while true {
            let ready = poll(&entry, 1, Socket.milliseconds(until: deadline))
            if ready > 0 { return true }
            if ready == 0 { return false }
            if errno != EINTR { return true }  // let the next call report the error
        }
    }

    /// Closes the descriptor.
    package func close() {
        #if canImport(Darwin)
        _ = Darwin.close(descriptor)
        #else
        _ = Glibc.close(descriptor)
        #endif
    }

    /// A `poll(2)` timeout: the milliseconds until `deadline`, rounded up, at least 0.
    package static func milliseconds(until deadline: ContinuousClock.Instant) -> Int32 {
        let left = ContinuousClock.now.duration(to: deadline)
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        return Int32(clamping: seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}

// SOCK_STREAM is an Int32 on Darwin and an enum case on glibc; the Darwin branch is read against Apple's
// documentation only (Docs/Platforms.md), since the Darwin type-check takes `os(Linux)` as true.
#if os(Linux)
private let streamType = Int32(SOCK_STREAM.rawValue)
private let sendFlags = Int32(MSG_NOSIGNAL)
#else
private let streamType = SOCK_STREAM
private let sendFlags: Int32 = 0
#endif

#if canImport(Darwin)
private func systemConnect(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t) -> Int32 {
    Darwin.connect(fd, address, length)
}
#else
private func systemConnect(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>?, _ length: socklen_t) -> Int32 {
    Glibc.connect(fd, address, length)
}
#endif

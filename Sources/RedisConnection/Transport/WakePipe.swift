#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif

/// A self-pipe that wakes the I/O thread out of `poll(2)` when a caller queues a request or closes.
///
/// Thread safety: ``wake()`` may be called from any thread (one `write(2)` of one byte), ``drain()`` only
/// from the I/O thread that polls ``readEnd``. Both ends close when the last owner lets go, so a late
/// ``wake()`` never writes to a descriptor number the process has reused.
package final class WakePipe: Sendable {
    /// Polled by the I/O thread.
    package let readEnd: Int32
    private let writeEnd: Int32

    /// Opens a non-blocking, close-on-exec pipe; `nil` when the process is out of descriptors.
    package init?() {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    /// Makes the read end readable. A full pipe already wakes the reader, so a failed write is harmless.
    package func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Empties the pipe.
    package func drain() {
        // A stack buffer, and no second read once a read came back short (the pipe was empty then): one
        // system call per wake-up instead of two, and no allocation (Docs/Performance.md, Redis tier).
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { scratch in
            while read(readEnd, scratch.baseAddress, scratch.count) == scratch.count {}
        }
    }

    deinit {
        #if canImport(Darwin)
        _ = Darwin.close(readEnd)
        _ = Darwin.close(writeEnd)
        #else
        _ = Glibc.close(readEnd)
        _ = Glibc.close(writeEnd)
        #endif
    }
}

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Drains a command's stdout and stderr pipes in one `poll(2)` loop: echoes them, collects them up to
/// a cap, and stops the command when this process's stdout is closed.
struct OutputCollector {
    /// What was collected from stdout (index 0) and stderr (index 1).
    private(set) var collected = [Data(), Data()]
    /// How the collection ended.
    private(set) var outcome: ChildResult.Outcome = .complete

    private let limit: Int?
    private let child: pid_t
    private var echoing: [Bool]
    private var collecting = true

    /// - Parameters:
    ///   - limit: Bytes of both outputs together to keep at most; `nil` for no cap.
    ///   - echoes: Copy the outputs to this process's stdout and stderr as they arrive.
    ///   - child: The command, signalled when stdout is closed.
    init(limit: Int?, echoes: Bool, child: pid_t) {
        self.limit = limit
        self.echoing = [echoes, echoes]
        self.child = child
    }

    /// Reads both pipes to their end (or until stdout is closed) and closes them.
    mutating func drain(output: Int32, error: Int32) {
        var descriptors = [
            pollfd(fd: output, events: Int16(POLLIN), revents: 0),
            pollfd(fd: error, events: Int16(POLLIN), revents: 0),
        ]
        defer { for descriptor in descriptors where descriptor.fd >= 0 { close(descriptor.fd) } }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while descriptors.contains(where: { $0.fd >= 0 }) {
            let ready = poll(&descriptors, nfds_t(descriptors.count), -1)
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in descriptors.indices where descriptors[index].fd >= 0 && descriptors[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes {
                    systemRead(descriptors[index].fd, $0.baseAddress, $0.count)
                }
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
                guard count > 0 else {
                    // End of file (or an unreadable pipe): a negative fd makes poll skip it.
                    close(descriptors[index].fd)
                    descriptors[index].fd = -1
                    continue
                }
                let chunk = Data(buffer[0..<count])
                collect(chunk, from: index)
                guard echoing[index] else { continue }
                if StandardStreams.write(chunk, to: index == 0 ? STDOUT_FILENO : STDERR_FILENO) { continue }
                echoing[index] = false
                if index == 0 {
                    // The reader of our stdout went away, as the end of a pipeline does: behave like a
                    // pipeline member. Closing our end gives the command SIGPIPE on its next write, and
                    // SIGTERM stops one that ignores it or no longer writes. Nothing is kept.
                    close(descriptors[0].fd)
                    descriptors[0].fd = -1
                    kill(child, SIGTERM)
                    outcome = .outputClosed
                    stopCollecting()
                }
            }
        }
    }

    private mutating func collect(_ chunk: Data, from index: Int) {
        guard collecting else { return }
        if let limit, collected[0].count + collected[1].count + chunk.count > limit {
            outcome = .overLimit
            stopCollecting()
            return
        }
        collected[index].append(chunk)
    }

    private mutating func stopCollecting() {
        collecting = false
        // Release what was gathered: it can no longer be kept, and memory must stay bounded.
        collected = [Data(), Data()]
    }
}
